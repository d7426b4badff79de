"""Slowloris against `serve` and `mcp --transport http`: more half-open connections than the
server has file descriptors. The server keeps serving authenticated requests, closes the
half-open ones after the head deadline, and its log stays small (no accept tracebacks)."""

import os
import re
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("uvicorn", reason="the 'serve' extra (uvicorn) is not installed")

import httpx  # noqa: E402

from rlm_docs.corpus import Corpus  # noqa: E402

KEY = "slowloris-test-key"
NOFILE = 256  # the server's open-file limit in this test
HALF_OPEN = 320  # more connections than that
COMMANDS = {
    "serve": (["serve"], r"listening on (http://\S+)", "/v1/models"),
    "mcp": (["mcp", "--transport", "http"], r"on (http://\S+)/mcp", "/mcp"),
}


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    pages = {"doc": ["Revenue was $5 million."]}
    return Corpus.from_documents(pages).save(tmp_path_factory.mktemp("slowloris") / "store")


def _limit_files() -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (NOFILE, hard))


def _start(command: str, store: Path, tmp: Path) -> tuple[subprocess.Popen, str, Path]:
    argv, pattern, _ = COMMANDS[command]
    log = tmp / f"{command}.log"
    env = dict(os.environ) | {
        "RLM_DOCS_HOME": str(tmp / "home"),
        "RLM_DOCS_CACHE": "off",
        "RLM_DOCS_MODEL": "",
        "SERVER_KEY": KEY,
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "rlm_docs", *argv, "--corpus", str(store), "--port", "0"]
        + ["--api-key-env", "SERVER_KEY", "--header-timeout", "2"],
        stdout=subprocess.DEVNULL,
        stderr=log.open("w"),
        env=env,
        preexec_fn=_limit_files,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        found = re.search(pattern, log.read_text())
        if found:
            return proc, found.group(1), log
        time.sleep(0.05)
    proc.kill()
    raise AssertionError(f"{command} did not start: {log.read_text()}")


def _authenticated(command: str, url: str) -> httpx.Response:
    auth = {"Authorization": f"Bearer {KEY}"}
    if command == "serve":
        return httpx.get(url + "/v1/models", headers=auth, timeout=15)
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    }
    accept = {"Accept": "application/json, text/event-stream"}
    return httpx.post(url + "/mcp", json=hello, headers=auth | accept, timeout=15)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_half_open_connections_past_the_fd_limit_do_not_lock_clients_out(command, store, tmp_path):
    proc, url, log = _start(command, store, tmp_path)
    host, port = url.removeprefix("http://").split(":")
    sockets = []
    try:
        for _ in range(HALF_OPEN):  # a request head that never ends
            s = socket.create_connection((host, int(port)), timeout=5)
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            sockets.append(s)
        answer = _authenticated(command, url)
        assert answer.status_code == 200, answer.text
        time.sleep(3)  # past the 2 s head deadline: every half-open connection was closed
        closed = 0
        for s in sockets:
            s.settimeout(5)
            try:
                closed += s.recv(1) == b""
            except OSError:
                closed += 1
        assert closed == HALF_OPEN
        assert _authenticated(command, url).status_code == 200
        assert proc.poll() is None
        text = log.read_text()
        assert "Traceback" not in text and "accept failed" not in text, text[-2000:]
        assert len(text) < 20_000
    finally:
        for s in sockets:
            s.close()
        proc.kill()
        proc.wait()
