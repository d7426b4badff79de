"""The examples of docs/benchmark-data.md, docs/export.md and docs/tracing.md run as written
(`tests/doc_snippets.py`: the hub is a local mirror, `openai:` models a loopback chat server and
the OTLP endpoint a receiver on 127.0.0.1), and do what the pages say: the real-model
reproduction sends every dev question to the model, each data set's run is written, and
`--otel` spans reach the endpoint."""

from pathlib import Path

import pytest

from tests.doc_snippets import Environment, lay_out, run_page

EXTRAS = {
    "benchmark-data.md": "datasets",
    "export.md": "inspect_ai",
    "tracing.md": "opentelemetry.sdk",
}


@pytest.mark.parametrize("page", sorted(EXTRAS))
def test_docs_examples_run(page: str, tmp_path: Path, docs_env: Environment) -> None:
    pytest.importorskip(EXTRAS[page], reason=f"the extra docs/{page} uses is not installed")
    work = lay_out(tmp_path / "work")
    served, spans = len(docs_env.requests), len(docs_env.spans)
    assert run_page(f"docs/{page}", work, docs_env.env), f"docs/{page} has no example"
    if page == "benchmark-data.md":
        assert len(docs_env.requests) - served >= 24  # the real-model run asked every question
        assert (work / "runs" / "madqa-rlm" / "predictions.madqa.jsonl").is_file()
        windows = sorted(p.name for p in (work / "runs" / "oolong").iterdir())
        assert windows == ["window-12", "window-7"]
        for run in ("financebench-offline", "mmlongbench-offline"):
            assert (work / "runs" / run / "results.jsonl").is_file()
    if page == "tracing.md":
        assert len(docs_env.spans) > spans, "no spans reached the OTLP endpoint"
