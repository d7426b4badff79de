"""`rlm-docs mcp` against hostile tool calls: a catastrophic grep pattern neither freezes the
server nor outlives SIGTERM, every helper's result is capped on the host, and `ask` refuses
over-long questions and non-finite budgets."""

import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp", reason="the 'mcp' extra (official MCP SDK) is not installed")
pytest.importorskip("re2", reason="the 'mcp' extra (google-re2) is not installed")

import httpx2  # noqa: E402  (the mcp SDK's HTTP client)
from mcp import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402

from rlm_docs.corpus import Corpus  # noqa: E402
from rlm_docs.governor import Budget  # noqa: E402
from rlm_docs.mcp_server import build_server  # noqa: E402
from rlm_docs.models import make_client  # noqa: E402
from rlm_docs.repl.helpers import HOST_MAX_CONTEXT, HOST_MAX_HITS  # noqa: E402

KEY = "mcp-hostile-key"
# 60 pages of 1,000 lines of words: 1.2M characters in one document
PAGE = "\n".join(["word word word word"] * 1000)
CATASTROPHIC = r"(\w+\s?)*\u0000"  # Python's re backtracks exponentially on each page


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    pages = {"words": [PAGE] * 60, "small": ["Revenue was $5 million."]}
    return Corpus.from_documents(pages).save(tmp_path_factory.mktemp("mcp-hostile") / "store")


class McpHttp:
    """`rlm-docs mcp --transport http --port 0` in a subprocess, with a bearer token."""

    def __init__(self, store: Path, tmp: Path) -> None:
        self.log = tmp / f"mcp-{time.monotonic_ns()}.log"
        env = dict(os.environ) | {
            "RLM_DOCS_HOME": str(tmp / "home"),
            "RLM_DOCS_CACHE": "off",
            "RLM_DOCS_MODEL": "",
            "MCP_KEY": KEY,
        }
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "rlm_docs", "mcp", "--corpus", str(store)]
            + ["--transport", "http", "--port", "0", "--api-key-env", "MCP_KEY"],
            stdout=subprocess.DEVNULL,
            stderr=self.log.open("w"),
            env=env,
        )
        deadline = time.monotonic() + 60
        self.url = ""
        while not self.url and time.monotonic() < deadline and self.proc.poll() is None:
            found = re.search(r"on (http://\S+/mcp)", self.log.read_text())
            self.url = found.group(1) if found else ""
            time.sleep(0.05)
        assert self.url, self.log.read_text()

    def calls(self, calls: list[tuple[str, dict]], seconds: float = 60) -> list:
        """Each tool call's (is_error, result or error text), within `seconds` in all."""

        async def main() -> list:
            out = []
            with anyio.fail_after(seconds):
                async with (
                    httpx2.AsyncClient(
                        headers={"Authorization": f"Bearer {KEY}"}, timeout=60
                    ) as http,
                    streamable_http_client(self.url, http_client=http) as (read, write),
                    ClientSession(read, write) as session,
                ):
                    await session.initialize()
                    for name, args in calls:
                        res = await session.call_tool(name, args)
                        value = (res.structured_content or {}).get("result")
                        out.append((res.is_error, res.content[0].text if res.is_error else value))
            return out

        return anyio.run(main)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture()
def mcp(store, tmp_path):
    server = McpHttp(store, tmp_path)
    yield server
    server.close()


def test_a_catastrophic_grep_pattern_neither_freezes_nor_outlives_sigterm(mcp):
    (grep_error, hits), (search_error, found), (refused, why) = mcp.calls(
        [
            ("grep", {"pattern": CATASTROPHIC}),
            ("search", {"query": "revenue", "k": 1}),
            ("grep", {"pattern": r"(?<=word )word"}),
        ]
    )
    assert not grep_error and hits == []
    assert not search_error and found[0]["file"] == "small"  # the server still answers
    assert refused and "RE2" in why and "lookaround" in why
    mcp.proc.send_signal(signal.SIGTERM)
    assert mcp.proc.wait(timeout=30) is not None


def test_every_host_helper_result_is_capped(mcp):
    (grep_error, hits), (search_error, found), (pages_error, why) = mcp.calls(
        [
            ("grep", {"pattern": "word", "context": 100_000, "max_hits": 10**9}),
            ("search", {"query": "word", "k": 10**6}),
            ("pages", {"doc": "words", "start": 1, "end": 60}),
        ]
    )
    assert not grep_error and len(hits) == HOST_MAX_HITS
    assert max(len(h["context"].splitlines()) for h in hits) == 2 * HOST_MAX_CONTEXT + 1
    assert not search_error and len(found) <= HOST_MAX_HITS
    assert pages_error and "over this server's limit" in why and "fewer pages" in why


def _ask(server, **args) -> tuple[bool, str]:
    """(refused, message) of an in-process `ask` call (the SDK raises a refusal there)."""
    try:
        result = anyio.run(server.call_tool, "ask", args)
    except ToolError as exc:
        return True, str(exc)
    return result.is_error, result.content[0].text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"question": "x" * 20_001}, "over this server's limit of 20,000"),
        ({"question": "q", "max_wall_s": math.nan}, "max_wall_s: expected a finite number"),
        ({"question": "q", "max_cost_usd": math.inf}, "max_cost_usd: expected a finite number"),
        ({"question": "q", "max_steps": -1}, "max_steps: must not be negative"),
    ],
)
def test_ask_refuses_long_questions_and_non_finite_budgets(store, args, message):
    client = make_client("offline")
    server = build_server(Corpus.load(store), model=client, sub_model=client, budget=Budget())
    is_error, text = _ask(server, **args)
    assert is_error and message in text, text


def test_a_dollar_limit_on_an_unpriced_model_is_refused(store):
    client = make_client("openai:no-price@http://127.0.0.1:9/v1", cache=False)
    server = build_server(Corpus.load(store), model=client, sub_model=client, budget=Budget())
    is_error, text = _ask(server, question="q", max_cost_usd=1.0)
    assert is_error and "max_cost_usd: no price is known" in text, text


def test_a_document_resource_over_the_cap_points_to_its_pages(store):
    from mcp.server.mcpserver.exceptions import ResourceError

    client = make_client("offline")
    server = build_server(Corpus.load(store), model=client, sub_model=client, budget=Budget())
    with pytest.raises(ResourceError, match="over this server's limit") as refused:
        anyio.run(server.read_resource, "rlm-docs://documents/words")
    assert "rlm-docs://documents/words/pages/N" in str(refused.value)
    small = list(anyio.run(server.read_resource, "rlm-docs://documents/small"))
    assert "Revenue was $5 million." in small[0].content
