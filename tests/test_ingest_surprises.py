"""Ingest without surprises: binary files refused by name, a replaced store says what it
dropped (and `--append` keeps it), files not read are listed, long ingests show a progress bar
and summarise their warnings, OCR falls back to the text layer when the service is unreachable,
an image-only PDF says to use OCR, and `---` read as heading underlines is explained."""

import gzip
import os
import random
import socket
import threading
from pathlib import Path

import pytest

from rlm_docs.cli import main
from rlm_docs.corpus import Corpus
from rlm_docs.errors import CorpusError, IngestError
from rlm_docs.ingest import ingest
from tests.fixtures.cli import SCRIPT
from tests.fixtures.ingest.pdf import minimal_pdf

pytestmark = pytest.mark.usefixtures("rlm_home", "no_ocr_service")


def png_bytes() -> bytes:
    return b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40


@pytest.mark.parametrize(
    "name, data, expected",
    [
        ("image.txt", png_bytes(), "this is a PNG image, not text"),
        ("archive.md", gzip.compress(b"page one\fpage two\n" * 200), "gzip-compressed data"),
        ("noise.txt", random.Random(7).randbytes(20_000), "contains NUL bytes"),
        ("wide.txt", "page one\fpage two\n".encode("utf-16"), "UTF-16 text: pass --encoding"),
        (
            "noise.json",
            bytes(random.Random(3).choice(range(128, 256)) for _ in range(5000)),
            "are not valid UTF-8",
        ),
    ],
)
def test_binary_files_are_refused_by_name(tmp_path, capsys, name, data, expected):
    bad = tmp_path / "src" / name
    bad.parent.mkdir()
    bad.write_bytes(data)
    (tmp_path / "src" / "good.md").write_text("page one\fpage two\n")
    assert main(["ingest", str(tmp_path / "src"), "--out", str(tmp_path / "store")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"rlm-docs ingest: error: {bad}: ") and expected in err
    assert "Traceback" not in err and len(err.splitlines()) == 1
    assert not (tmp_path / "store").exists()


def write_docs(folder: Path, names: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / f"{name}.md").write_text(f"{name} page one\f{name} page two\n")
    return folder


def test_replacing_a_store_names_the_removed_documents_and_append_keeps_them(tmp_path, capsys):
    store = tmp_path / "store"
    assert (
        main(["ingest", str(write_docs(tmp_path / "a", ["alpha", "beta"])), "-o", str(store)]) == 0
    )
    capsys.readouterr()
    new = write_docs(tmp_path / "b", ["gamma"])
    assert main(["ingest", str(new), "--out", str(store)]) == 0
    err = capsys.readouterr().err
    assert "removed 2 document(s) that were in" in err and "alpha, beta" in err
    assert "--append" in err
    assert Corpus.load(store).names == ["gamma"]
    # --append adds and replaces by name, keeping the rest
    assert (
        main(["ingest", str(write_docs(tmp_path / "a", ["alpha", "beta"])), "-o", str(store)]) == 0
    )
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "beta.md").write_text("new beta page\fsecond\fthird\n")
    write_docs(tmp_path / "c", ["delta"])
    capsys.readouterr()
    assert main(["ingest", str(tmp_path / "c"), "--out", str(store), "--append"]) == 0
    assert "removed" not in capsys.readouterr().err
    corpus = Corpus.load(store)
    assert corpus.names == ["alpha", "beta", "delta"]
    assert corpus.page("beta", 1) == "new beta page" and corpus.num_pages("beta") == 3
    assert corpus.page("alpha", 2).strip() == "alpha page two"
    sources = {Path(e["path"]).name: e["documents"] for e in corpus.manifest["sources"]}
    assert sources == {"alpha.md": ["alpha"], "beta.md": ["beta"], "delta.md": ["delta"]}
    assert corpus.search("alpha page", k=1)[0].document == "alpha"  # index covers kept docs
    # appending what is already there leaves the store as it was
    assert main(["ingest", str(tmp_path / "c"), "--out", str(store), "--append"]) == 0
    assert "(unchanged): 3 documents" in capsys.readouterr().out
    assert Corpus.load(store).names == ["alpha", "beta", "delta"]
    alpha = tmp_path / "a" / "alpha.md"  # the first document's source: no reordering either
    assert main(["ingest", str(alpha), "--out", str(store), "--append"]) == 0
    assert "(unchanged): 3 documents" in capsys.readouterr().out


def test_files_not_read_are_counted_and_listed_with_verbose(tmp_path, capsys):
    src = write_docs(tmp_path / "src", ["alpha"])
    (src / "table.csv").write_text("a,b\n1,2\n")
    (src / "figure.png").write_bytes(png_bytes())
    (src / ".hidden.md").write_text("secret\n")
    assert main(["ingest", str(src), "--out", str(tmp_path / "s")]) == 0
    err = capsys.readouterr().err
    assert "ignored 3 file(s) that are not .pdf/.json/.md/.txt, hidden, or corpus stores" in err
    assert main(["ingest", str(src), "--out", str(tmp_path / "s"), "-v", "--json"]) == 0
    report = __import__("json").loads(capsys.readouterr().out)
    assert sorted(Path(p).name for p in report["ignored"]) == [
        ".hidden.md",
        "figure.png",
        "table.csv",
    ]


def test_many_warnings_are_summarised_and_listed_with_verbose(tmp_path, capsys):
    src = tmp_path / "src"
    src.mkdir()
    for i in range(8):
        (src / f"doc{i}.txt").write_text(f"page one of {i}\f\fpage three\n")  # empty page 2
    (src / "doc0.txt").write_text("page one\f\f\f\fpage five\n")  # empty pages 2-4
    (src / "single.md").write_text("just one page\n")  # no form feed
    assert main(["ingest", str(src), "--out", str(tmp_path / "s")]) == 0
    err = capsys.readouterr().err
    assert "9 warnings (-v lists them all):" in err
    assert "8 × 1–3 empty page(s) kept (doc0.txt, doc1.txt, doc2.txt, …)" in err
    assert "1 × no form feed page breaks (single.md)" in err
    assert "doc7.txt" not in err
    assert main(["ingest", str(src), "--out", str(tmp_path / "s2"), "-v"]) == 0
    err = capsys.readouterr().err
    assert err.count("warning: ") == 9 and "doc7.txt: 1 empty page(s) kept: 2" in err


def test_progress_is_reported_per_file(tmp_path):
    src = write_docs(tmp_path / "src", [f"d{i}" for i in range(5)])
    seen: list[tuple[int, int, int]] = []
    ingest([src], tmp_path / "s", on_progress=lambda *a: seen.append(a))
    assert seen == [(i, 5, 2 * i) for i in range(1, 6)]


@pytest.mark.skipif(SCRIPT is None, reason="rlm-docs script not installed")
def test_a_terminal_sees_a_progress_bar(tmp_path):
    pexpect = pytest.importorskip("pexpect")
    src = write_docs(tmp_path / "src", [f"d{i}" for i in range(40)])
    child = pexpect.spawn(
        SCRIPT,
        ["ingest", str(src), "--out", str(tmp_path / "s")],
        env={**os.environ, "COLUMNS": "120"},
        encoding="utf-8",
        timeout=120,
    )
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "files, " in child.before and " pages" in child.before  # the bar's columns
    assert "40 documents, 80 pages" in child.before


def refusing_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ClosingServer:
    """Accepts connections and closes them at once (a broken proxy, a dead service)."""

    def __enter__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()
        return self

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            conn.close()

    def __exit__(self, *exc):
        self.sock.close()


PAGES = ["ACME annual report 2023\nRevenue 12.5 million", "Balance sheet\nCash 4.2"]


@pytest.mark.parametrize("server", ["refused", "closed"])
def test_ocr_auto_falls_back_to_the_text_layer_when_unreachable(tmp_path, monkeypatch, server):
    pdf = tmp_path / "acme.pdf"
    pdf.write_bytes(minimal_pdf(PAGES))
    monkeypatch.setenv("MISTRAL_API_KEY", "sk-test-ocr-key-123")
    with ClosingServer() as closing:
        port = refusing_port() if server == "refused" else closing.port
        monkeypatch.setenv("MISTRAL_BASE_URL", f"http://127.0.0.1:{port}")
        report = ingest([pdf], tmp_path / "store", ocr="auto")
        assert (closing.accepted > 0) == (server == "closed")
        with pytest.raises(IngestError, match=r"acme\.pdf: Mistral OCR unreachable at http"):
            ingest([pdf], tmp_path / "strict", ocr="mistral")  # asked for OCR: no fallback
    corpus = Corpus.load(tmp_path / "store")
    assert corpus.page("acme", 1).startswith("ACME annual report 2023")
    assert corpus.manifest["sources"][0]["reader"] == "pypdf"
    [warning] = [w for w in report.warnings if "unreachable" in w]
    assert f"127.0.0.1:{port}" in warning and "read the PDF locally instead" in warning
    assert "sk-test-ocr-key-123" not in warning


def test_separators_read_as_heading_underlines_are_explained(tmp_path):
    book = tmp_path / "book.md"
    book.write_text("Chapter one text\n---\nChapter two text\n---\nChapter three text\n")
    report = ingest([book], tmp_path / "s", separator="---")
    [warning] = [w for w in report.warnings if "---" in w]
    assert "all 2 '---' line(s) sit directly under a text line" in warning
    assert "heading underlines" in warning and "blank line before each separator" in warning
    fixed = tmp_path / "fixed.md"
    fixed.write_text("Chapter one text\n\n---\nChapter two text\n\n---\nChapter three text\n")
    assert ingest([fixed], tmp_path / "s2", separator="---").pages == 3
    absent = tmp_path / "absent.md"
    absent.write_text("no separators here\n")
    report = ingest([absent], tmp_path / "s3", separator="---")
    assert any("separator '---' not found; read as one page" in w for w in report.warnings)


def test_append_still_refuses_two_new_documents_of_one_name(tmp_path):
    store = tmp_path / "store"
    ingest([write_docs(tmp_path / "a", ["alpha"])], store)
    write_docs(tmp_path / "b" / "x", ["beta"])
    write_docs(tmp_path / "b" / "y", ["beta"])
    with pytest.raises(CorpusError, match="duplicate document name 'beta'"):
        ingest([tmp_path / "b"], store, append=True)
    assert Corpus.load(store).names == ["alpha"]
