"""Every ```python snippet of docs/prompt.md runs as written, in a fresh interpreter (offline:
the snippets call the corpus helpers on an in-memory corpus)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "prompt.md"
_SNIPPET = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def snippets() -> list[tuple[int, str]]:
    """(line number, code) of each ```python block of the document."""
    text = DOC.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in _SNIPPET.finditer(text)]


def test_the_document_has_a_snippet():
    assert snippets()


@pytest.mark.parametrize(("line", "code"), snippets(), ids=[f"line{n}" for n, _ in snippets()])
def test_prompt_doc_snippet_runs(line: int, code: str, tmp_path: Path) -> None:
    env = dict(os.environ) | {"RLM_DOCS_CACHE": "off", "PYTHONPATH": str(ROOT)}
    env["RLM_DOCS_HOME"] = str(tmp_path / "home")
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, f"docs/prompt.md line {line}:\n{code}\n{done.stderr[-3000:]}"
