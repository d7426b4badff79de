"""The ingest pipeline: directory discovery, the written store, skip-by-hash re-ingest,
atomicity on failure, duplicate names."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import rlm_docs.ingest.pipeline as pipeline
from rlm_docs.corpus import Corpus
from rlm_docs.errors import RlmDocsError
from rlm_docs.ingest import ingest
from rlm_docs.tokens import count_tokens

FIX = Path(__file__).parent / "fixtures" / "ingest"
GOOD = ["acme_2023.json", "brief.pages.json", "filing.txt", "report_ff.md", "corpus_marked.txt"]


@pytest.fixture
def src(tmp_path: Path) -> Path:
    d = tmp_path / "src"
    (d / "nested").mkdir(parents=True)
    for name in GOOD[:3]:
        shutil.copy(FIX / name, d / name)
    for name in GOOD[3:]:
        shutil.copy(FIX / name, d / "nested" / name)
    (d / "notes.rst").write_text("ignored: unsupported extension")
    (d / ".hidden.txt").write_text("ignored: hidden")
    return d


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the files the pipeline actually reads (not reused from the old store)."""
    seen: list[str] = []
    real = pipeline.read_source

    def spy(path, *args):
        seen.append(path.name)
        return real(path, *args)

    monkeypatch.setattr(pipeline, "read_source", spy)
    return seen


def test_ingest_directory_writes_store(src: Path, tmp_path: Path) -> None:
    report = ingest([src], tmp_path / "store")
    corpus = Corpus.load(tmp_path / "store")
    assert corpus.names == ["acme_2023", "brief", "filing", "alpha", "Beta Report", "report_ff"]
    assert report.documents == 6 and report.pages == corpus.total_pages == 3 + 4 + 4 + 2 + 1 + 2
    assert report.read == 5 and report.skipped == 0 and report.written
    page = corpus.page("filing", 4)
    assert corpus.page_tokens("filing", 4) == count_tokens(page)
    assert corpus.total_tokens == report.tokens
    info = {d.name: d for d in corpus.documents}
    assert info["alpha"].source.endswith("corpus_marked.txt")
    assert info["brief"].chars == sum(
        len(p) for p in json.loads((FIX / "brief.pages.json").read_text())
    )
    manifest = json.loads((tmp_path / "store" / "manifest.json").read_text())
    sources = {Path(e["path"]).name: e for e in manifest["sources"]}
    assert sources["corpus_marked.txt"]["documents"] == ["alpha", "Beta Report"]
    assert sources["filing.txt"]["reader"] == "pdftotext"
    assert len(sources["filing.txt"]["sha256"]) == 64
    assert (tmp_path / "store" / "bm25").is_dir()
    assert corpus.search("anvils")[0].document == "filing"


def test_reingest_skips_unchanged_files(src: Path, tmp_path: Path, reads: list[str]) -> None:
    out = tmp_path / "store"
    ingest([src], out)
    assert len(reads) == 5
    before = (out / "pages.parquet").stat().st_mtime_ns
    reads.clear()
    report = ingest([src], out)
    assert reads == [] and report.skipped == 5 and report.read == 0 and not report.written
    assert (out / "pages.parquet").stat().st_mtime_ns == before
    (src / "filing.txt").write_text("changed page one\fchanged page two\f")
    report = ingest([src], out)
    assert reads == ["filing.txt"] and report.skipped == 4 and report.written
    corpus = Corpus.load(out)
    assert corpus.pages("filing", 1, 2) == ["changed page one", "changed page two"]
    assert corpus.page("acme_2023", 3) == "Notes to the financial statements."
    # Different reader options mean a different result: re-read.
    reads.clear()
    ingest([src / "nested" / "report_ff.md"], out, separator="---")
    assert reads == ["report_ff.md"]
    assert Corpus.load(out).names == ["report_ff"]


def test_failed_ingest_leaves_old_store_intact(src: Path, tmp_path: Path) -> None:
    out = tmp_path / "store"
    ingest([src], out)
    files = sorted(p.name for p in out.iterdir())
    (src / "zzz_bad.json").write_text('{"not": "ocr"}')
    with pytest.raises(RlmDocsError, match=r"zzz_bad\.json: JSON is not a Mistral OCR response"):
        ingest([src], out)
    assert sorted(p.name for p in out.iterdir()) == files
    assert Corpus.load(out).total_pages == 16
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src", "store"]  # no temp leftovers


def test_duplicate_names_across_files(tmp_path: Path) -> None:
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "report.txt").write_text(f"{sub} page\f")
    with pytest.raises(
        RlmDocsError, match=r"duplicate document name 'report'.*a/report\.txt.*b/report\.txt"
    ):
        ingest([tmp_path / "a", tmp_path / "b"], tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_same_file_twice_is_read_once(tmp_path: Path) -> None:
    f = tmp_path / "one.txt"
    f.write_text("p1\fp2\f")
    report = ingest([f, tmp_path / "one.txt", tmp_path], tmp_path / "out")
    assert report.documents == 1


def test_refuses_to_replace_a_directory_that_is_not_a_store(tmp_path: Path) -> None:
    precious = tmp_path / "mydata"
    precious.mkdir()
    (precious / "thesis.tex").write_text("do not delete")
    with pytest.raises(RlmDocsError, match="mydata: directory is not empty and not a corpus store"):
        ingest([FIX / "filing.txt"], precious)
    assert (precious / "thesis.tex").read_text() == "do not delete"


def test_missing_source_and_empty_directory(tmp_path: Path) -> None:
    with pytest.raises(RlmDocsError, match=r"nope\.txt: no such file or directory"):
        ingest([tmp_path / "nope.txt"], tmp_path / "out")
    (tmp_path / "empty").mkdir()
    with pytest.raises(RlmDocsError, match="empty: no .pdf/.json/.md/.txt files"):
        ingest([tmp_path / "empty"], tmp_path / "out")


def test_bad_options(tmp_path: Path) -> None:
    with pytest.raises(RlmDocsError, match="unknown --format 'docx'"):
        ingest([FIX / "filing.txt"], tmp_path / "out", format="docx")
    with pytest.raises(RlmDocsError, match="unknown --ocr 'cloud'"):
        ingest([FIX / "filing.txt"], tmp_path / "out", ocr="cloud")


def test_index_built_in_a_forked_child_matches(src: Path, tmp_path: Path, monkeypatch) -> None:
    import rlm_docs.corpus.store as store

    ingest([src], tmp_path / "inline")
    monkeypatch.setattr(store, "PARALLEL_MIN_CHARS", 0)
    ingest([src], tmp_path / "forked")
    a, b = Corpus.load(tmp_path / "inline"), Corpus.load(tmp_path / "forked")
    for query in ("anvils", "revenue grew", "balance sheet cash", "page"):
        assert a.search(query, k=5) == b.search(query, k=5)


def test_failing_index_child_is_an_error_and_keeps_old_store(
    src: Path, tmp_path: Path, monkeypatch
) -> None:
    import rlm_docs.corpus.search as search
    import rlm_docs.corpus.store as store

    out = tmp_path / "store"
    ingest([src], out)
    (src / "filing.txt").write_text("new\f")

    def broken(*args):
        raise MemoryError("simulated")

    monkeypatch.setattr(store, "PARALLEL_MIN_CHARS", 0)
    monkeypatch.setattr(search, "build_index", broken)
    with pytest.raises(RlmDocsError, match="building the BM25 index failed"):
        ingest([src], out)
    assert Corpus.load(out).page("filing", 2).startswith("Item 1. Business")


def test_store_inside_a_source_directory_is_not_ingested(src: Path) -> None:
    out = src / "store"
    ingest([src], out)
    report = ingest([src], out)
    assert report.skipped == 5 and not report.written
    assert Corpus.load(out).total_pages == 16


def test_two_ingests_of_the_same_files_write_identical_stores(src: Path, tmp_path: Path) -> None:
    """Under different hash seeds (as two runs of `rlm-docs ingest` have): same vocabulary ids,
    so the same float32 scores and the same order for near-tied pages in every study."""
    stores = []
    for seed in ("1", "2"):
        out = tmp_path / f"store{seed}"
        subprocess.run(
            [sys.executable, "-m", "rlm_docs", "ingest", str(src), "--out", str(out)],
            env={**os.environ, "PYTHONHASHSEED": seed}, check=True, capture_output=True,
        )  # fmt: skip
        stores.append({p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()})
    assert sorted(stores[0]) == sorted(stores[1]) and Path("bm25/vocab.index.json") in stores[0]
    assert [k for k in stores[0] if stores[0][k] != stores[1][k]] == []
