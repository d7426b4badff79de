"""Where a store sits relative to its sources: a wrong `--out` is blamed as the output, a store
written inside its source directory does not become input of the next ingest, and the temp
directory of an ingest that was killed is removed by the next one."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from rlm_docs.cli import main
from rlm_docs.corpus import Corpus
from rlm_docs.resources import demo_corpus_dir


def _docs(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    shutil.copytree(demo_corpus_dir() / "documents", docs)
    return docs


def test_a_store_inside_its_sources_is_not_read_as_a_source(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _docs(tmp_path)
    assert main(["ingest", "docs", "--out", "docs/store"]) == 0
    assert main(["ingest", "docs", "--out", "other"]) == 0
    captured = capsys.readouterr()
    assert "hidden, or corpus stores: docs/store" in captured.err
    assert "other (written): 3 documents" in captured.out
    assert main(["ingest", "docs", "--out", "docs/store"]) == 0
    assert "docs/store (unchanged): 3 documents" in capsys.readouterr().out
    assert Corpus.load(tmp_path / "other").names == Corpus.load(tmp_path / "docs/store").names


def test_an_output_directory_holding_the_sources_is_blamed(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "work").mkdir()
    _docs(tmp_path)
    assert main(["ingest", "docs", "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"rlm-docs ingest: error: {tmp_path}: directory is not empty and not a corpus store; "
        "not replacing it"
    )


def _dead_pid() -> int:
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout)


def test_a_killed_ingests_temp_directory_is_removed_by_the_next(tmp_path):
    docs = _docs(tmp_path)
    dead = _dead_pid()
    orphan = tmp_path / f".store.{dead}.k3j_x9.tmp"  # as atomic_directory names it
    orphan.mkdir()
    (orphan / "pages.parquet").write_bytes(b"half written")
    swapped = tmp_path / f".store.old-{dead}"
    swapped.mkdir()
    live = tmp_path / f".store.{os.getpid()}.abc.tmp"  # a live writer
    live.mkdir()
    other = tmp_path / f".store2.{dead}.abc.tmp"  # another store's
    other.mkdir()
    assert main(["ingest", str(docs), "--out", str(tmp_path / "store")]) == 0
    assert not orphan.exists() and not swapped.exists()
    assert live.exists() and other.exists()
