"""The examples of docs/benchmark-data.md, docs/export.md and docs/tracing.md run as written.

Each page's ```bash and ```python blocks run in order in one fresh directory (holding the
repository's `corpus/`), as a reader would type them. Nothing reaches the internet: the hub
is a local copy laid out as the hub serves it (`RLM_DOCS_HUB_MIRROR`, with the hub switched
off), `openai:` models are a loopback chat server (`OPENAI_BASE_URL`), and the OTLP endpoint is
a receiver this test starts on 127.0.0.1.
"""

import os
import re
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from tests.hub_fixture import (
    write_financebench_mirror,
    write_madqa_mirror,
    write_mmlongbench_mirror,
    write_oolong_mirror,
)
from tests.servers.chat import ChatServer

ROOT = Path(__file__).resolve().parent.parent
_BLOCK = re.compile(r"^```(bash|python)\n(.*?)^```", re.MULTILINE | re.DOTALL)
EXTRAS = {
    "benchmark-data.md": "datasets",
    "export.md": "inspect_ai",
    "tracing.md": "opentelemetry.sdk",
}


def blocks(page: str) -> list[tuple[str, int, str]]:
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    return [
        (m.group(1), text.count("\n", 0, m.start()) + 1, m.group(2)) for m in _BLOCK.finditer(text)
    ]


class _Receiver(BaseHTTPRequestHandler):
    bodies: list[bytes] = []

    def do_POST(self):  # noqa: N802 (http.server's name)
        self.bodies.append(self.rfile.read(int(self.headers["Content-Length"])))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


def _hub_copy(path: Path) -> Path:
    """Local copies of every hub repository the pages fetch."""
    for write in (
        write_madqa_mirror,
        write_oolong_mirror,
        write_financebench_mirror,
        write_mmlongbench_mirror,
    ):
        write(path)
    return path


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """One RLM_DOCS_HOME for all pages, so the demo store is built once."""
    return tmp_path_factory.mktemp("home")


@pytest.mark.parametrize("page", sorted(EXTRAS))
def test_docs_examples_run(page, tmp_path, home):
    pytest.importorskip(EXTRAS[page], reason=f"the extra docs/{page} uses is not installed")
    found = blocks(page)
    assert found, f"docs/{page} has no example"
    work = tmp_path / "work"
    shutil.copytree(ROOT / "corpus", work / "corpus")
    receiver = HTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    _Receiver.bodies = []
    env = dict(os.environ)
    for name in ("RLM_DOCS_MODEL", "RLM_DOCS_SUB_MODEL", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        env.pop(name, None)
    env.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=str(ROOT),
        RLM_DOCS_HOME=str(home),
        RLM_DOCS_CACHE="off",
        RLM_DOCS_HUB_MIRROR=str(_hub_copy(tmp_path / "hub-copy")),
        HF_HOME=str(tmp_path / "hf"),
        HF_HUB_OFFLINE="1",
        OPENAI_API_KEY="sk-test-docs",
        OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{receiver.server_port}",
    )
    reply = '```repl\nprint("looked")\n```\nFINAL(Not answerable)'
    try:
        with ChatServer(reply=lambda messages: reply, api_key="sk-test-docs") as chat:
            env["OPENAI_BASE_URL"] = chat.base_url
            for kind, line, code in found:
                argv = ["bash", "-eo", "pipefail", "-c", code]
                if kind == "python":
                    argv = [sys.executable, "-c", code]
                done = subprocess.run(
                    argv, cwd=work, env=env, capture_output=True, text=True, timeout=600
                )
                assert done.returncode == 0, (
                    f"docs/{page} line {line}:\n{code}\n{done.stderr[-3000:]}"
                )
            served = len(chat.requests)
    finally:
        receiver.shutdown()
    if page == "benchmark-data.md":
        assert served >= 24  # the real-model reproduction ran every dev question
        assert (work / "runs" / "madqa-rlm" / "predictions.madqa.jsonl").is_file()
        windows = sorted(p.name for p in (work / "runs" / "oolong").iterdir())
        assert windows == ["window-12", "window-7"]
        for run in ("financebench-offline", "mmlongbench-offline"):
            assert (work / "runs" / run / "results.jsonl").is_file()
    if page == "tracing.md":
        assert _Receiver.bodies, "no spans reached the OTLP endpoint"
