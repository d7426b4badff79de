"""Hostile input files: OCR JSON built to exhaust memory, symlinks out of the source tree,
results with non-numeric effort fields. Each fails fast with one line naming the file."""

import json
import os
import time
from pathlib import Path

import pytest

from rlm_docs.cli import main
from rlm_docs.corpus import Corpus
from rlm_docs.errors import IngestError
from rlm_docs.ingest import Options, ingest, read_source


def read(path: Path):
    return read_source(path, path.read_bytes(), "0" * 64, Options())


def test_ocr_index_far_past_the_page_count_costs_nothing(tmp_path: Path) -> None:
    f = tmp_path / "huge_index.json"
    f.write_text(json.dumps({"pages": [{"index": 3_000_000_000, "markdown": "x"}]}))
    started = time.process_time()
    with pytest.raises(IngestError) as info:
        read(f)
    assert time.process_time() - started < 1.0
    assert str(info.value) == (
        f"{f}: OCR response is missing page(s) 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 "
        "(3,000,000,000 in all, 1 listed)"
    )


def test_table_links_are_inlined_once_without_recursion(tmp_path: Path) -> None:
    tables = [
        {"id": f"tbl-{i}.md", "content": f"[tbl-{i + 1}.md](tbl-{i + 1}.md) " * 2}
        for i in range(40)
    ]
    page = {"index": 0, "markdown": "Intro [tbl-0.md](tbl-0.md) end", "tables": tables}
    f = tmp_path / "nested.json"
    f.write_text(json.dumps({"pages": [page]}))
    (doc,) = read(f).documents
    assert doc.pages == ["Intro [tbl-1.md](tbl-1.md) [tbl-1.md](tbl-1.md)  end"]


def test_symlinks_out_of_the_source_are_refused_unless_followed(tmp_path: Path) -> None:
    secret = tmp_path / "host" / "secret.md"
    secret.parent.mkdir()
    secret.write_text("host secret")
    src = tmp_path / "docs"
    (src / "sub").mkdir(parents=True)
    (src / "report.md").write_text("A real report.")
    (src / "sub" / "inside.md").symlink_to(src / "report.md")  # stays inside: fine
    (src / "leak.md").symlink_to(secret)
    with pytest.raises(IngestError, match=r"leak\.md: a symlink to .*secret\.md, outside"):
        ingest([src], tmp_path / "store")
    with pytest.raises(IngestError, match="--follow-symlinks"):
        ingest([src / "leak.md"], tmp_path / "store")
    assert not (tmp_path / "store").exists()
    report = ingest([src], tmp_path / "store", follow_symlinks=True)
    assert report.documents == 2  # sub/inside.md is report.md: read once
    assert main(["ingest", str(src), "--out", str(tmp_path / "cli")]) == 2
    assert main(["ingest", str(src), "--out", str(tmp_path / "cli"), "--follow-symlinks"]) == 0
    assert "host secret" in Corpus.load(tmp_path / "cli").render()


def test_view_names_file_and_line_of_a_non_numeric_effort_field(tmp_path, capsys) -> None:
    run = tmp_path / "run"
    run.mkdir()
    rows = [
        {"id": "q1", "question": "a?", "answer": ["x"], "steps": 2, "cost_usd": 0.01},
        {"id": "q2", "question": "b?", "answer": ["y"], "steps": 3, "cost_usd": "cheap"},
    ]
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "view.html"
    assert main(["view", str(run), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"rlm-docs view: error: {run / 'results.jsonl'}:2: field 'cost_usd' must be a number, "
        "got 'cheap'"
    )
    assert not out.exists()


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_a_source_directory_reached_through_a_symlink_is_still_inside(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "a.md").write_text("text")
    (tmp_path / "alias").symlink_to(real)
    assert ingest([tmp_path / "alias"], tmp_path / "store").documents == 1
