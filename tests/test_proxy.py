"""The metering proxy driven by the official `openai` client, in front of a real loopback chat
server: exact token totals, per-question grouping (path and header), streaming, budget
refusals that never reach the upstream, and the `rlm-docs proxy` command."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the 'serve' extra (fastapi, uvicorn) is not installed")
pytest.importorskip("uvicorn", reason="the 'serve' extra (fastapi, uvicorn) is not installed")

import openai  # noqa: E402

from rlm_docs.governor import Budget  # noqa: E402
from rlm_docs.proxy import MeteringProxy  # noqa: E402
from tests.servers.chat import ChatServer  # noqa: E402

HI = [{"role": "user", "content": "Say something about page 3."}]


def _client(base_url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=base_url, api_key="unused", max_retries=0)


def test_exact_totals_per_question_streaming_and_not():
    reply = lambda m: f"reply to {len(m)} message(s)"  # noqa: E731
    with (
        ChatServer(reply=reply) as srv,
        MeteringProxy(f"openai:up@{srv.base_url}", cache=False) as proxy,
    ):
        q1 = _client(proxy.question_url("q1"))
        r = q1.chat.completions.create(model="up", messages=HI)
        assert r.choices[0].message.content == "reply to 1 message(s)"
        chunks = list(
            q1.chat.completions.create(
                model="up",
                messages=HI * 2,
                stream=True,
                stream_options={"include_usage": True},
            )
        )
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        assert text == "reply to 2 message(s)"
        streamed_usage = chunks[-1].usage
        # A sub-call filed by header on another question.
        sub = _client(proxy.base_url).with_options(
            default_headers={"X-RLM-Docs-Question": "q2", "X-RLM-Docs-Role": "sub"}
        )
        sub.chat.completions.create(model="up", messages=HI)
        served = srv.served_usage()
        entries = proxy.ledger.entries
        assert [(e.question_id, e.role) for e in entries] == [
            ("q1", "root"),
            ("q1", "root"),
            ("q2", "sub"),
        ]
        assert sum(e.input_tokens for e in entries) == served["prompt_tokens"]
        assert sum(e.output_tokens for e in entries) == served["completion_tokens"]
        assert r.usage.prompt_tokens == entries[0].input_tokens
        assert streamed_usage.prompt_tokens == entries[1].input_tokens
        e1, e2 = proxy.effort("q1"), proxy.effort("q2")
        assert (e1["steps"], e1["sub_calls"]) == (2, 0)
        assert (e2["steps"], e2["sub_calls"]) == (0, 1)
        assert e1["input_tokens"] + e2["input_tokens"] == served["prompt_tokens"]


def test_budget_refusal_names_the_axis_and_never_reaches_upstream():
    with ChatServer(reply=lambda m: "ok") as srv:
        budget = Budget(max_steps=2, max_sub_calls=1)
        with MeteringProxy(f"openai:up@{srv.base_url}", budget=budget, cache=False) as proxy:
            root = _client(proxy.question_url("q", "root"))
            sub = _client(proxy.question_url("q", "sub"))
            root.chat.completions.create(model="up", messages=HI)
            sub.chat.completions.create(model="up", messages=HI)
            with pytest.raises(openai.BadRequestError) as refused:
                sub.chat.completions.create(model="up", messages=HI)
            error = refused.value.body
            assert error["code"] == "budget_exceeded" and error["axis"] == "sub_calls"
            assert "sub-call budget exhausted: 1/1" in error["message"]
            root.chat.completions.create(model="up", messages=HI)
            with pytest.raises(openai.BadRequestError) as refused:  # streaming too
                root.chat.completions.create(model="up", messages=HI, stream=True)
            assert refused.value.body["axis"] == "steps"
            assert srv.served_usage()["responses"] == 3
            assert len(srv.requests) == 3
            # Another question has its own budget.
            _client(proxy.question_url("other")).chat.completions.create(model="up", messages=HI)
            assert len(srv.requests) == 4


def test_input_token_budget_refuses_before_sending():
    with ChatServer() as srv:
        budget = Budget(max_input_tokens=30)
        with MeteringProxy(f"openai:up@{srv.base_url}", budget=budget, cache=False) as proxy:
            q = _client(proxy.question_url("q"))
            q.chat.completions.create(model="up", messages=HI)
            with pytest.raises(openai.BadRequestError) as refused:
                q.chat.completions.create(model="up", messages=HI * 3)
            assert refused.value.body["axis"] == "input_tokens"
            assert len(srv.requests) == 1
            assert proxy.effort("q")["input_tokens"] == srv.served_usage()["prompt_tokens"]


def test_dollars_are_priced_like_rlm_docs_calls_and_a_dollar_limit_refuses():
    with ChatServer(reply=lambda m: "a fairly short reply") as srv:
        budget = Budget(max_cost_usd=0.00001)  # gpt-5-mini: $0.25 / $2 per 1M tokens
        upstream = f"openai:gpt-5-mini@{srv.base_url}"
        with MeteringProxy(upstream, budget=budget, cache=False) as proxy:
            q = _client(proxy.question_url("q"))
            r = q.chat.completions.create(model="gpt-5-mini", messages=HI)
            (entry,) = proxy.ledger.entries
            expected = (entry.input_tokens * 0.25 + entry.output_tokens * 2.0) / 1e6
            assert entry.cost_usd == pytest.approx(expected)
            assert r.model_extra["rlm_docs"]["cost_usd"] == entry.cost_usd
            assert srv.requests[0].body["max_tokens"] > 0  # the governor capped the reply
            with pytest.raises(openai.BadRequestError) as refused:
                q.chat.completions.create(model="gpt-5-mini", messages=HI * 20)
            assert refused.value.body["axis"] == "cost_usd"
            assert len(srv.requests) == 1
            assert proxy.effort("q")["cost_usd"] == pytest.approx(expected)


def test_requests_the_proxy_cannot_relay():
    with ChatServer() as srv, MeteringProxy(f"openai:up@{srv.base_url}", cache=False) as proxy:
        c = _client(proxy.base_url)
        with pytest.raises(openai.NotFoundError, match="this proxy offers"):
            c.chat.completions.create(model="gpt-other", messages=HI)
        with pytest.raises(openai.BadRequestError, match="role 'boss'"):
            _client(proxy.question_url("q", "boss")).chat.completions.create(
                model="up", messages=HI
            )
        with pytest.raises(openai.BadRequestError, match="tools"):
            c.chat.completions.create(
                model="up",
                messages=HI,
                tools=[{"type": "function", "function": {"name": "f", "parameters": {}}}],
            )
        for bad in ([{"content": "no role"}], [{"role": "user", "content": {"x": 1}}]):
            with pytest.raises(openai.BadRequestError, match=r"messages\[0\]"):
                c.chat.completions.create(model="up", messages=bad)
        assert [m.id for m in c.models.list()] == ["up"]
        assert srv.requests == []
        parts = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
        assert c.chat.completions.create(model="up", messages=parts).choices
        assert [r.body["messages"] for r in srv.requests] == [[{"role": "user", "content": "hi"}]]


def test_proxy_command_writes_ledger_and_effort(tmp_path: Path):
    with ChatServer(reply=lambda m: "fine") as srv:
        log = tmp_path / "proxy.log"
        env = dict(os.environ) | {"RLM_DOCS_HOME": str(tmp_path / "home"), "RLM_DOCS_CACHE": "off"}
        proc = subprocess.Popen(
            [sys.executable, "-m", "rlm_docs", "proxy", "--port", "0", "--upstream",
             f"openai:up@{srv.base_url}", "--max-sub-calls", "5", "--out", str(tmp_path / "out")],
            stderr=log.open("w"),
            env=env,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while not (found := re.search(r"listening on (http://\S+)", log.read_text())):
                assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
                time.sleep(0.05)
            base = found.group(1)
            _client(f"{base}/q/a/v1").chat.completions.create(model="up", messages=HI)
            _client(f"{base}/q/b/sub/v1").chat.completions.create(model="up", messages=HI)
        finally:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(30) == 0, log.read_text()
    rows = [
        json.loads(line)
        for line in (tmp_path / "out" / "effort.jsonl").read_text().split("\n")
        if line
    ]
    assert [(r["id"], r["steps"], r["sub_calls"]) for r in rows] == [("a", 1, 0), ("b", 0, 1)]
    ledger = (tmp_path / "out" / "ledger.jsonl").read_text().splitlines()
    assert len(ledger) == 2
    assert sum(json.loads(x)["input_tokens"] for x in ledger) == srv.served_usage()["prompt_tokens"]
