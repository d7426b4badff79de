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


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    return err


def test_ingest_of_a_json_document_nested_100k_deep_is_one_line(tmp_path, capsys) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    assert main(["ingest", str(src), "--out", str(tmp_path / "store")]) == 2
    err = one_error_line(capsys)
    assert err == f"rlm-docs ingest: error: {src / 'deep.json'}: JSON nested too deeply to read"


@pytest.mark.filterwarnings("error::RuntimeWarning")  # nor a numpy warning from its empty index
def test_a_page_of_long_whitespace_runs_is_counted_not_a_tokenizer_crash(tmp_path) -> None:
    from rlm_docs.tokens import count_tokens, count_tokens_batch, encoding

    spaces, mixed = "a" + " " * 1_200_000 + "b", " \t" * 600_000
    assert 1_000 < count_tokens(spaces) < 20_000
    assert count_tokens_batch([mixed, "hello world"])[1] == 2
    text = "Revenue was $12 million.\n\n  Net income rose."  # ordinary text: counts unchanged
    assert count_tokens(text) == len(encoding().encode(text))
    src = tmp_path / "src"
    src.mkdir()
    (src / "blank.txt").write_text(spaces)
    assert main(["ingest", str(src), "--out", str(tmp_path / "store")]) == 0
    assert Corpus.load(tmp_path / "store").page("blank", 1) == spaces


def deep_trajectory(path: Path, depth: int) -> Path:
    """A trajectory whose child runs nest `depth` deep (written without recursion)."""
    meta = json.dumps({"type": "metadata", "format": "rlm-docs.trajectory", "version": 2})
    turn = '{"type": "iteration", "iteration": 1, "prompt": [], "response": "r", "code_blocks": '
    call = '[{"code": "x", "result": {"stdout": "", "rlm_calls": [{"kind": "rlm_query", '
    head = turn + call + '"prompt": "p", "response": "a", "children": [' + meta + ", "
    tail = ', {"type": "result", "answer": "a"}]}]}}]}'
    body = head * depth + turn + "[]}" + tail * depth
    path.write_text(meta + "\n" + body + '\n{"type": "result", "answer": "a"}\n')
    return path


@pytest.mark.parametrize("depth", [40, 100, 100_000])
def test_view_of_a_deeply_nested_trajectory_is_one_line(tmp_path, capsys, depth) -> None:
    log = deep_trajectory(tmp_path / "deep.jsonl", depth)
    out = tmp_path / "view.html"
    assert main(["view", str(log), "--out", str(out)]) == 2
    err = one_error_line(capsys)
    assert err.startswith(f"rlm-docs view: error: {log}") and "nested" in err
    assert not out.exists()
    assert main(["view", str(deep_trajectory(log, 3)), "--out", str(out)]) == 0


def test_report_of_a_run_whose_steps_is_not_a_number_is_one_line(
    rlm_home, tmp_path, capsys, monkeypatch
) -> None:
    from tests.fixtures.eval.support import QUESTIONS, build_store, fake_model
    from tests.servers.chat import ChatServer

    run, store = tmp_path / "run", build_store(tmp_path / "store")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-000000000000000000")
    monkeypatch.setenv("RLM_DOCS_CACHE", "off")
    with ChatServer(reply=fake_model) as srv:
        args = ["eval", "--dataset", str(QUESTIONS), "--corpus", str(store), "--limit", "2"]
        args += ["--system", "static-rag", "--model", f"openai:fake@{srv.base_url}"]
        assert main([*args, "--out", str(run), "--no-progress"]) == 0
    capsys.readouterr()
    lines = (run / "results.jsonl").read_text().splitlines()
    record = json.loads(lines[1]) | {"steps": "many"}
    (run / "results.jsonl").write_text("\n".join([lines[0], json.dumps(record)]) + "\n")
    assert main(["report", str(run), "--out", str(tmp_path / "report")]) == 2
    err = one_error_line(capsys)
    assert err == (
        f"rlm-docs report: error: {run / 'results.jsonl'}:2: field 'steps' must be a number, "
        "got 'many'"
    )
