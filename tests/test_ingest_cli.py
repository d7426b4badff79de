"""`rlm-docs ingest` through `rlm_docs.cli.main`: summary, warnings, exit codes."""

import json
from pathlib import Path

from rlm_docs.cli import main
from rlm_docs.corpus import Corpus

FIX = Path(__file__).parent / "fixtures" / "ingest"


def test_ingest_prints_summary_and_warnings(tmp_path: Path, capsys) -> None:
    out = tmp_path / "store"
    argv = ["ingest", str(FIX / "filing.txt"), str(FIX / "report.md"), "--separator=---"]
    assert main([*argv, "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "2 documents, 7 pages" in captured.out and "skipped 0 unchanged" in captured.out
    assert "warning:" in captured.err and "filing.txt: 1 empty page(s) kept: 3" in captured.err
    assert Corpus.load(out).num_pages("report") == 3
    assert main([*argv, "-o", str(out)]) == 0
    assert "skipped 2 unchanged" in capsys.readouterr().out
    # The value may follow as its own word although it starts with dashes (MADQA's `---`).
    spaced = [*argv[:-1], "--separator", "---", "--out", str(tmp_path / "spaced")]
    assert main(spaced) == 0
    assert Corpus.load(tmp_path / "spaced").num_pages("report") == 3


def test_ingest_json_report(tmp_path: Path, capsys) -> None:
    assert (
        main(["ingest", str(FIX / "acme_2023.json"), "--out", str(tmp_path / "s"), "--json"]) == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report["documents"] == 1 and report["pages"] == 3 and report["written"] is True


def test_ingest_errors_exit_2_with_one_line(tmp_path: Path, capsys) -> None:
    code = main(["ingest", str(FIX / "missing_page.json"), "--out", str(tmp_path / "s")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("rlm-docs ingest: error: ") and "missing_page.json" in err
    assert "Traceback" not in err
    assert not (tmp_path / "s").exists()


def test_ingest_forced_format(tmp_path: Path, capsys) -> None:
    src = tmp_path / "pages.dat"
    src.write_text('["one", "two"]')
    assert main(["ingest", str(src), "--out", str(tmp_path / "s")]) == 2
    assert "--format" in capsys.readouterr().err
    assert main(["ingest", str(src), "--out", str(tmp_path / "s"), "--format", "pages"]) == 0
    assert Corpus.load(tmp_path / "s").pages("pages", 1, 2) == ["one", "two"]


def test_ingest_warns_on_identical_documents_naming_both(tmp_path: Path, capsys) -> None:
    src = tmp_path / "src"
    src.mkdir()
    filing = (FIX / "filing.txt").read_text()
    (src / "AMCOR_2022_8K_2022-04-26.txt").write_text(filing)
    (src / "AMCOR_2022_8K_dated-2022-04-26.txt").write_text(filing)
    (src / "other.txt").write_text(filing.replace("\f", "\f\f", 1))  # same text, other pages
    assert main(["ingest", str(src), "--out", str(tmp_path / "store")]) == 0
    err = capsys.readouterr().err
    dup = [line for line in err.splitlines() if "identical content" in line]
    assert len(dup) == 1
    assert "AMCOR_2022_8K_2022-04-26, AMCOR_2022_8K_dated-2022-04-26" in dup[0]
    assert "other" not in dup[0]
    # both copies stay in the store, and the warning is kept in its manifest
    corpus = Corpus.load(tmp_path / "store")
    assert len(corpus) == 3
    assert any("identical content" in w for w in corpus.manifest["warnings"])
