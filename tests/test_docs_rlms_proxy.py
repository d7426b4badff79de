"""Every code block of docs/proxy.md and docs/rlms.md runs as written, in order, in one working
directory per page (`tests/doc_snippets.py`), and the blocks reach the model.

`openai:gpt-5-mini` (and rlms' OpenAI client) is a loopback server (OPENAI_BASE_URL) that plays
rlms' root model, its sub-model and the extraction step; `mystore` and `questions.jsonl` are the
eval fixtures."""

from pathlib import Path

import pytest

from tests.doc_snippets import Environment, lay_out, run_page


@pytest.mark.parametrize("doc", ["proxy.md", "rlms.md"])
def test_doc_blocks_run_in_order(doc: str, tmp_path: Path, docs_env: Environment) -> None:
    pytest.importorskip("uvicorn", reason="the 'serve' extra (fastapi, uvicorn) is not installed")
    if doc == "rlms.md":
        pytest.importorskip("rlm", reason="the 'rlms' extra (the rlms package) is not installed")
    work = lay_out(tmp_path / "work", eval_fixture=True)
    served = len(docs_env.requests)
    assert run_page(f"docs/{doc}", work, docs_env.env), f"docs/{doc} has no code blocks"
    assert len(docs_env.requests) > served, "the blocks made no model call"
