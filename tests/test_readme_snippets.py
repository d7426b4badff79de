"""Every ```python snippet in README.md runs as written, each in a fresh interpreter.

The snippets use the names a reader would: `filings/` and `corpus/documents/` (the demo corpus
sources, the latter where a repository checkout has them), stores called
`mystore`, `mycorpus`, `store/` and `path/to/store` (the demo corpus), and `openai:gpt-5-mini`,
which here is a loopback OpenAI-format server (OPENAI_BASE_URL), so no snippet needs a key or
the network. A snippet that fails names its README line.
"""

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from rlm_docs.ingest.demo import demo_corpus_path
from rlm_docs.resources import demo_corpus_dir
from tests.servers.chat import ChatServer

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
_SNIPPET = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def snippets() -> list[tuple[int, str]]:
    """(line number, code) of each ```python block of the README."""
    text = README.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in _SNIPPET.finditer(text)]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory laid out as the snippets expect."""
    root = tmp_path_factory.mktemp("readme")
    shutil.copytree(demo_corpus_dir() / "documents", root / "filings")
    shutil.copytree(demo_corpus_dir() / "documents", root / "corpus" / "documents")
    store = demo_corpus_path()
    for name in ("mystore", "mycorpus", "store", "path/to/store"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(store, root / name)
    return root


@pytest.fixture(scope="module")
def server() -> Iterator[ChatServer]:
    with ChatServer(reply=lambda m: "A short reply.", api_key="sk-test-readme") as srv:
        yield srv


def test_the_readme_has_python_snippets():
    assert len(snippets()) >= 5


@pytest.mark.parametrize(("line", "code"), snippets(), ids=[f"line{n}" for n, _ in snippets()])
def test_readme_snippet_runs(line: int, code: str, workdir: Path, server: ChatServer) -> None:
    env = dict(os.environ)
    env.update(
        {
            "OPENAI_API_KEY": "sk-test-readme",
            "OPENAI_BASE_URL": server.base_url,
            "RLM_DOCS_CACHE": "off",
            "PYTHONPATH": str(ROOT),
        }
    )
    env.pop("RLM_DOCS_MODEL", None)
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"README.md line {line}:\n{code}\n{done.stderr[-3000:]}"
