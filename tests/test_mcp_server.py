"""`rlm-docs mcp`: the real CLI as an MCP server, driven by the official SDK's own client over
stdio and over streamable HTTP (tools, tool errors, `ask`, documents as resources)."""

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import anyio
import httpx
import pytest

pytest.importorskip("mcp", reason="the 'mcp' extra (official MCP SDK) is not installed")

import httpx2  # noqa: E402  (the mcp SDK's HTTP client)
from mcp import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from rlm_docs.corpus import Corpus  # noqa: E402
from rlm_docs.repl.helpers import make_helpers  # noqa: E402

PAGES = {
    "3M_2018_10K": [
        "# Cover\ncover page",
        "# Capex\nCapital expenditure was $1,577 million in 2018.",
    ],
    "AMD 2019 10K": ["AMD revenue was $6.73 billion in 2019."],
}
QUESTION = "What was 3M's capital expenditure in 2018?"


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    return Corpus.from_documents(PAGES).save(tmp_path_factory.mktemp("mcp") / "store")


def _env(tmp: Path) -> dict[str, str]:
    return {"RLM_DOCS_HOME": str(tmp / "home"), "RLM_DOCS_CACHE": "off", "RLM_DOCS_MODEL": ""}


async def _exercise(session: ClientSession, store: Path) -> dict:
    """Every tool, a tool error, `ask` and the resources; returns what the checks need."""
    await session.initialize()
    out: dict = {"tools": sorted(t.name for t in (await session.list_tools()).tools)}
    helpers = make_helpers(Corpus.load(store))
    search = await session.call_tool("search", {"query": "capital expenditure", "k": 2})
    out["search"] = (
        search.is_error,
        search.structured_content,
        helpers["search"]("capital expenditure", 2),
    )
    files = await session.call_tool("files", {})
    out["files"] = (files.structured_content, helpers["files"]())
    page = await session.call_tool("page", {"doc": "AMD 2019 10K", "n": 1})
    out["page"] = page.content[0].text
    grep = await session.call_tool("grep", {"pattern": r"\$[\d.,]+ (million|billion)"})
    out["grep"] = grep.structured_content["result"]
    toc = await session.call_tool("toc", {"doc": "3M_2018_10K"})
    out["toc"] = toc.structured_content["result"]
    section = await session.call_tool("read_section", {"doc": "3M_2018_10K", "section": "Capex"})
    out["section"] = section.structured_content["result"]
    pages = await session.call_tool("pages", {"doc": "3M_2018_10K", "start": 1, "end": 2})
    out["pages"] = pages.structured_content["result"]
    out["direct_pages"] = helpers["pages"]("3M_2018_10K", 1, 2)
    bad = await session.call_tool("page", {"doc": "3M_2018_10K", "n": 9})
    out["bad"] = (bad.is_error, bad.content[0].text)
    progress: list[tuple[float, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, message))

    ask = await session.call_tool(
        "ask", {"question": QUESTION, "max_steps": 50}, progress_callback=on_progress
    )
    out["ask"] = (ask.is_error, ask.structured_content)
    out["progress"] = progress
    resources = (await session.list_resources()).resources
    out["resources"] = [(str(r.uri), r.name) for r in resources]
    doc = await session.read_resource(resources[1].uri)
    out["doc"] = doc.contents[0].text
    one = await session.read_resource("rlm-docs://documents/3M_2018_10K/pages/2")
    out["one"] = one.contents[0].text
    return out


def _check(out: dict) -> None:
    assert out["tools"] == sorted(
        ["ask", "files", "grep", "page", "pages", "read_section", "search", "toc"]
    )
    is_error, structured, direct = out["search"]
    assert not is_error and structured["result"] == direct  # the sandbox helpers, as they are
    assert out["files"][0]["result"] == out["files"][1]
    assert out["page"] == "AMD revenue was $6.73 billion in 2019."
    assert {(h["file"], h["page"]) for h in out["grep"]} == {
        ("3M_2018_10K", 2),
        ("AMD 2019 10K", 1),
    }
    assert [t["title"] for t in out["toc"]][-1] == "Capex"
    assert "Capital expenditure was $1,577 million" in str(out["section"])
    assert out["pages"] == out["direct_pages"] and "Capital expenditure" in str(out["pages"])
    assert out["bad"][0] and "page 9" in out["bad"][1] and "3M_2018_10K" in out["bad"][1]
    is_error, answer = out["ask"]
    assert not is_error and answer["citations"] == [{"file": "3M_2018_10K", "page": 2}]
    assert "1,577" in answer["text"] and answer["stop_reason"] == "final"
    assert answer["explanation"].startswith("Read from 3M_2018_10K page 2")
    assert answer["caveat"] == "" and answer["explanation"] in answer["text"]
    assert answer["budget"]["max_steps"] == 20  # a call cannot raise the server's budget
    assert [value for value, _ in out["progress"]] == [1, 2]  # one notification per turn
    assert out["progress"][0][1].startswith("turn 1: ") and "final answer" in out["progress"][1][1]
    assert out["resources"] == [
        ("rlm-docs://documents/3M_2018_10K", "3M_2018_10K"),
        ("rlm-docs://documents/AMD%202019%2010K", "AMD 2019 10K"),
    ]
    assert out["doc"].startswith("[FILE: AMD 2019 10K | TOTAL PAGES: 1]\n[PAGE 1]\n")
    assert out["one"] == "# Capex\nCapital expenditure was $1,577 million in 2018."


def test_stdio_with_the_sdk_client(store, tmp_path):
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "rlm_docs", "mcp", "--corpus", str(store), "--model", "offline"],
        env=_env(tmp_path),
    )

    async def main() -> dict:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            return await _exercise(session, store)

    _check(anyio.run(main))


def test_streamable_http_with_the_sdk_client(store, tmp_path):
    log = tmp_path / "mcp.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "rlm_docs", "mcp", "--corpus", str(store), "--transport", "http"]
        + ["--port", "0", "--api-key-env", "MCP_TEST_KEY"],
        stdout=subprocess.DEVNULL,
        stderr=log.open("w"),
        env=dict(os.environ) | _env(tmp_path) | {"MCP_TEST_KEY": "mcp-secret"},
    )
    try:
        deadline = time.monotonic() + 60
        url = None
        while url is None and time.monotonic() < deadline and proc.poll() is None:
            found = re.search(r"on (http://\S+/mcp)", log.read_text())
            url = found.group(1) if found else time.sleep(0.05)
        assert url, log.read_text()

        refused = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert refused.status_code == 401  # the bearer token guards every request

        async def main() -> dict:
            auth = {"Authorization": "Bearer mcp-secret"}
            async with (
                httpx2.AsyncClient(headers=auth, timeout=60) as http,
                streamable_http_client(url, http_client=http) as (read, write),
                ClientSession(read, write) as session,
            ):
                return await _exercise(session, store)

        _check(anyio.run(main))
    finally:
        proc.terminate()
        proc.wait(30)


def test_api_key_is_refused_on_stdio(store, tmp_path):
    run = subprocess.run(
        [sys.executable, "-m", "rlm_docs", "mcp", "--corpus", str(store), "--api-key-env", "X"],
        capture_output=True,
        text=True,
        env=dict(os.environ) | _env(tmp_path),
        timeout=60,
    )
    assert run.returncode == 2 and "--api-key-env applies to --transport http" in run.stderr


def test_missing_store_is_one_line(tmp_path):
    run = subprocess.run(
        [sys.executable, "-m", "rlm_docs", "mcp", "--corpus", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        env=dict(os.environ) | _env(tmp_path),
        timeout=60,
    )
    assert run.returncode == 2
    assert run.stderr.startswith("rlm-docs mcp: error: ") and "nope" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
