"""Every code block of docs/proxy.md and docs/rlms.md runs as written, in order, in one working
directory per document (later blocks use what earlier ones wrote), each in a fresh process.

`openai:gpt-5-mini` (and rlms' OpenAI client) is a loopback server (OPENAI_BASE_URL) that plays
rlms' root model, its sub-model and the extraction step; `mystore` and `questions.jsonl` are the
eval fixtures. A failing block names its document line."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.eval.support import QUESTIONS, build_store
from tests.fixtures.rlms_model import rlms_model
from tests.servers.chat import ChatServer

ROOT = Path(__file__).resolve().parent.parent
_BLOCK = re.compile(r"^```(python|bash)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def blocks(doc: str) -> list[tuple[int, str, str]]:
    """(line, language, code) of each python or bash block of docs/`doc`."""
    text = (ROOT / "docs" / doc).read_text(encoding="utf-8")
    return [
        (text.count("\n", 0, m.start()) + 1, m.group(1), m.group(2)) for m in _BLOCK.finditer(text)
    ]


@pytest.mark.parametrize("doc", ["proxy.md", "rlms.md"])
def test_doc_blocks_run_in_order(doc: str, tmp_path: Path) -> None:
    pytest.importorskip("uvicorn", reason="the 'serve' extra (fastapi, uvicorn) is not installed")
    if doc == "rlms.md":
        pytest.importorskip("rlm", reason="the 'rlms' extra (the rlms package) is not installed")
    build_store(tmp_path / "mystore")
    shutil.copy(QUESTIONS, tmp_path / "questions.jsonl")
    found = blocks(doc)
    assert found, f"docs/{doc} has no code blocks"
    with ChatServer(reply=rlms_model) as server:
        env = dict(os.environ) | {
            "OPENAI_API_KEY": "sk-test-docs-0000000000",
            "OPENAI_BASE_URL": server.base_url,
            "RLM_DOCS_CACHE": "off",
            "RLM_DOCS_HOME": str(tmp_path / "home"),
            "PYTHONPATH": str(ROOT),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        }
        env.pop("RLM_DOCS_MODEL", None)
        for line, language, code in found:
            command = (
                [sys.executable, "-c", code] if language == "python" else ["bash", "-ec", code]
            )
            done = subprocess.run(
                command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
            )
            assert done.returncode == 0, f"docs/{doc} line {line}:\n{code}\n{done.stderr[-3000:]}"
        assert server.requests, "the blocks made no model call"
    if doc == "rlms.md":
        assert (tmp_path / "rlms-view.html").is_file()
        assert len(list((tmp_path / "runs" / "rlms-as-rlms").glob("*.jsonl"))) == 6
