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


def test_a_pdf_pages_sharing_one_huge_stream_stops_before_extraction(tmp_path, capsys) -> None:
    from tests.fixtures.ingest.pdf import shared_stream_pdf

    # The file grows by one byte per ~250 characters of the shared stream; the text an
    # extractor walks grows by one character per character per page.
    small, big = shared_stream_pdf(10, 500_000), shared_stream_pdf(10, 5_000_000)
    assert (len(big) - len(small)) * 200 < 4_500_000 and len(big) < 25_000
    src = tmp_path / "src"
    src.mkdir()
    (src / "bomb.pdf").write_bytes(big)  # 10 pages x 5,000,000 characters, as reviewed
    started = time.process_time()
    assert main(["ingest", str(src), "--out", str(tmp_path / "store"), "--ocr", "local"]) == 2
    assert time.process_time() - started < 10  # extraction would take minutes
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(src / "bomb.pdf") in err
    assert "page 1: 5,450,031 bytes of page content is over the limit" in err
    assert not (tmp_path / "store").exists()


def test_a_shared_stream_counts_once_per_page_toward_the_document_bound(
    tmp_path, monkeypatch
) -> None:
    from rlm_docs.ingest import pdf_bounds
    from tests.fixtures.ingest.pdf import shared_stream_pdf

    monkeypatch.setattr(pdf_bounds, "MAX_DOCUMENT_CONTENT_BYTES", 500_000)
    f = tmp_path / "shared.pdf"
    f.write_bytes(shared_stream_pdf(10, 100_000))
    with pytest.raises(IngestError, match=r"shared\.pdf: pages 1-5 hold 54\d,\d+ bytes"):
        read(f)


def test_pdf_text_past_the_page_and_document_bounds_is_refused(tmp_path, monkeypatch) -> None:
    from rlm_docs.ingest import pdf_bounds
    from tests.fixtures.ingest.pdf import minimal_pdf

    f = tmp_path / "long.pdf"
    f.write_bytes(minimal_pdf(["short page", "x" * 3000, "y" * 3000]))
    monkeypatch.setattr(pdf_bounds, "MAX_PAGE_CHARS", 2000)
    with pytest.raises(IngestError, match=r"long\.pdf: page 2: 3,0\d\d characters of text"):
        read(f)
    monkeypatch.setattr(pdf_bounds, "MAX_PAGE_CHARS", 5000)
    monkeypatch.setattr(pdf_bounds, "MAX_DOCUMENT_CHARS", 5000)
    with pytest.raises(IngestError, match=r"long\.pdf: pages 1-3 hold 6,0\d\d characters"):
        read(f)
