"""`rlm-docs serve`: the real CLI on 127.0.0.1 driven by the official `openai` client
(normal and streamed answers, auth, request limits, 429, a client that disconnects mid-run,
SIGTERM with a run in flight)."""

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the 'serve' extra (fastapi, uvicorn) is not installed")
pytest.importorskip("uvicorn", reason="the 'serve' extra (fastapi, uvicorn) is not installed")

import httpx  # noqa: E402
import openai  # noqa: E402

from rlm_docs.corpus import Corpus  # noqa: E402
from rlm_docs.engine import RLM  # noqa: E402
from tests.servers.chat import ChatServer  # noqa: E402

PAGES = {
    "3M_2018_10K": ["cover page", "Capital expenditure was $1,577 million in 2018."],
    "AMD_2019_10K": ["AMD revenue was $6.73 billion in 2019."],
}
QUESTION = "What was 3M's capital expenditure in 2018?"
KEY = "serve-test-key"


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    return Corpus.from_documents(PAGES).save(tmp_path_factory.mktemp("serve") / "store")


class Served:
    """`python -m rlm_docs serve ... --port 0` in a subprocess; its log file and base URL."""

    def __init__(self, args: list[str], tmp: Path, env: dict[str, str] | None = None) -> None:
        self.log = tmp / f"serve-{time.monotonic_ns()}.log"
        full_env = dict(os.environ) | {
            "RLM_DOCS_HOME": str(tmp / "home"),
            "RLM_DOCS_CACHE": "off",
            "SERVE_KEY": KEY,
            "OPENAI_API_KEY": "sk-loopback",
        }
        full_env.pop("RLM_DOCS_MODEL", None)
        full_env.pop("RLM_DOCS_SUB_MODEL", None)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "rlm_docs", "serve", "--port", "0", *args],
            stdout=subprocess.DEVNULL,
            stderr=self.log.open("w"),
            env=full_env | (env or {}),
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            found = re.search(r"listening on (http://\S+)", self.text())
            if found:
                self.url = found.group(1)
                return
            if self.proc.poll() is not None:
                raise AssertionError(f"serve exited {self.proc.returncode}: {self.text()}")
            time.sleep(0.05)
        raise AssertionError(f"serve did not start: {self.text()}")

    def text(self) -> str:
        return self.log.read_text()

    def client(self, **kwargs) -> openai.OpenAI:
        kwargs.setdefault("api_key", KEY)
        kwargs.setdefault("max_retries", 0)
        return openai.OpenAI(base_url=self.url + "/v1", **kwargs)

    def wait_log(self, pattern: str, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if re.search(pattern, self.text()):
                return self.text()
            time.sleep(0.05)
        raise AssertionError(f"{pattern!r} not logged: {self.text()}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="module")
def offline(store, tmp_path_factory):
    srv = Served(
        ["--corpus", str(store), "--api-key-env", "SERVE_KEY", "--max-body-bytes", "20000"],
        tmp_path_factory.mktemp("offline"),
    )
    yield srv
    srv.stop()


def slow_root(turns: int):
    """A root that runs `print('turn')` for `turns` turns, then answers: stateless over the
    conversation, as a chat server must be."""

    def reply(messages: list[dict]) -> str:
        done = sum(1 for m in messages if m["role"] == "assistant")
        if done + 1 >= turns:
            return "FINAL(slow answer)"
        return "```repl\nprint('turn')\n```"

    return reply


def test_models_lists_rlm_docs(offline):
    assert [m.id for m in offline.client().models.list()] == ["rlm-docs"]


def test_answer_with_citations_and_exact_usage(offline, store):
    resp = offline.client().chat.completions.create(
        model="rlm-docs", messages=[{"role": "user", "content": QUESTION}]
    )
    direct = RLM(store, model="offline").ask(QUESTION)
    text = resp.choices[0].message.content
    assert text.startswith("; ".join(direct.answer)) and "Sources: 3M_2018_10K p.2" in text
    extra = resp.model_extra["rlm_docs"]
    assert extra["answer"] == direct.answer
    # the rest of the answer record: the explanation follows the values in the text too
    assert extra["explanation"] == direct.explanation and extra["caveat"] == ""
    assert direct.explanation.startswith("Read from 3M_2018_10K page 2")
    assert f"\n\n{direct.explanation}\n\nSources:" in text
    assert extra["citations"] == [{"file": "3M_2018_10K", "page": 2}]
    # the offline model is deterministic, so a direct run spends exactly the same tokens
    assert resp.usage.prompt_tokens == direct.input_tokens
    assert resp.usage.completion_tokens == direct.output_tokens
    assert resp.usage.total_tokens == direct.input_tokens + direct.output_tokens
    assert extra["steps"] == direct.steps and extra["stop_reason"] == "final"


def test_stream_sends_progress_per_turn_then_the_answer(offline):
    stream = offline.client().chat.completions.create(
        model="rlm-docs",
        messages=[{"role": "user", "content": QUESTION}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    progress = [
        c.model_extra["rlm_docs_progress"]
        for c in chunks
        if "rlm_docs_progress" in (c.model_extra or {})
    ]
    assert [p["turn"] for p in progress] == [1, 2]
    assert progress[-1]["final"] and progress[0]["sub_calls"] >= 1
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert "Sources: 3M_2018_10K p.2" in content
    assert chunks[-1].usage is not None and chunks[-1].usage.prompt_tokens > 0
    finals = [c for c in chunks if c.choices and c.choices[0].finish_reason == "stop"]
    assert finals and finals[0].model_extra["rlm_docs"]["citations"][0]["page"] == 2


def test_auth_failure_is_401(offline):
    with pytest.raises(openai.AuthenticationError):
        offline.client(api_key="wrong").chat.completions.create(
            model="rlm-docs", messages=[{"role": "user", "content": QUESTION}]
        )
    with pytest.raises(openai.AuthenticationError):
        offline.client(api_key="wrong").models.list()


def test_request_limits_and_bad_requests(offline):
    client = offline.client()
    with pytest.raises(openai.APIStatusError) as too_big:
        client.chat.completions.create(
            model="rlm-docs", messages=[{"role": "user", "content": "x" * 30_000}]
        )
    assert too_big.value.status_code == 413
    with pytest.raises(openai.BadRequestError, match="no message with role 'user'"):
        client.chat.completions.create(
            model="rlm-docs", messages=[{"role": "system", "content": "hi"}]
        )
    with pytest.raises(openai.NotFoundError, match="does not exist"):
        client.chat.completions.create(
            model="gpt-5", messages=[{"role": "user", "content": QUESTION}]
        )
    with pytest.raises(openai.BadRequestError, match="this server offers"):
        client.chat.completions.create(
            model="rlm-docs",
            messages=[{"role": "user", "content": QUESTION}],
            extra_body={"rlm_docs": {"model": "openai:gpt-5"}},
        )


def test_request_budget_is_capped_by_the_server(offline):
    client = offline.client()
    resp = client.chat.completions.create(
        model="rlm-docs",
        messages=[{"role": "user", "content": QUESTION}],
        extra_body={"rlm_docs": {"budget": {"max_steps": 1, "max_sub_calls": 10_000}}},
    )
    extra = resp.model_extra["rlm_docs"]
    assert extra["budget"]["max_steps"] == 1  # lowered by the request
    assert extra["budget"]["max_sub_calls"] == 100  # capped at the server's default maximum
    assert extra["steps"] <= 2 and extra["stop_reason"] in ("forced", "budget", "final")


@pytest.fixture()
def slow(store, tmp_path):
    """A server with one run slot whose root model is a loopback chat server (0.4 s a call)."""
    with ChatServer(reply=slow_root(8), latency_s=0.4) as chat:
        srv = Served(
            ["--corpus", str(store), "--max-runs", "1", "--model", f"openai:slow@{chat.base_url}"]
            + ["--shutdown-grace", "20"],
            tmp_path,
        )
        try:
            yield srv, chat
        finally:
            srv.stop()


def _ask_in_thread(srv: Served, results: list) -> threading.Thread:
    def ask() -> None:
        try:
            results.append(
                srv.client(timeout=60).chat.completions.create(
                    model="rlm-docs", messages=[{"role": "user", "content": "slow question"}]
                )
            )
        except Exception as exc:  # noqa: BLE001 - the test inspects it
            results.append(exc)

    thread = threading.Thread(target=ask)
    thread.start()
    return thread


def test_excess_runs_get_429_with_retry_after(slow):
    srv, _ = slow
    results: list = []
    thread = _ask_in_thread(srv, results)
    srv.wait_log(r"run r1: started")
    with pytest.raises(openai.RateLimitError) as refused:
        srv.client().chat.completions.create(
            model="rlm-docs", messages=[{"role": "user", "content": "another"}]
        )
    assert int(refused.value.response.headers["Retry-After"]) >= 1
    thread.join(60)
    assert results[0].choices[0].message.content == "slow answer"
    assert results[0].model_extra["rlm_docs"]["steps"] == 8


def test_client_disconnecting_mid_run_cancels_it_and_server_stays_healthy(slow):
    srv, chat = slow
    with pytest.raises(openai.APITimeoutError):
        srv.client(timeout=1.5).chat.completions.create(
            model="rlm-docs", messages=[{"role": "user", "content": "slow question"}]
        )
    log = srv.wait_log(r"run r1: cancelled after")
    assert "client disconnected" in log
    calls_at_cancel = len(chat.requests)
    assert calls_at_cancel < 8  # the run stopped instead of spending its whole budget
    # the slot is free again and the server answers the next request in full
    resp = srv.client(timeout=60).chat.completions.create(
        model="rlm-docs", messages=[{"role": "user", "content": "slow question"}]
    )
    assert resp.choices[0].message.content == "slow answer"
    assert httpx.get(srv.url + "/health").json() == {"status": "ok", "runs": 0}


def test_stream_closed_mid_run_cancels_it(slow):
    srv, _ = slow
    stream = srv.client(timeout=60).chat.completions.create(
        model="rlm-docs", messages=[{"role": "user", "content": "slow question"}], stream=True
    )
    for chunk in stream:
        if "rlm_docs_progress" in (chunk.model_extra or {}):
            break  # one turn seen: hang up
    stream.close()
    assert "stream closed" in srv.wait_log(r"run r1: cancelled after")


def test_sigterm_lets_the_run_in_flight_finish(slow):
    srv, _ = slow
    results: list = []
    thread = _ask_in_thread(srv, results)
    srv.wait_log(r"run r1: started")
    srv.proc.send_signal(signal.SIGTERM)
    thread.join(60)
    assert results and not isinstance(results[0], Exception), results
    assert results[0].choices[0].message.content == "slow answer"
    assert srv.proc.wait(30) == 0
    log = srv.text()
    assert "run r1: finished" in log and "shutdown: all runs ended" in log


def test_sigterm_past_the_grace_period_cancels_and_logs(store, tmp_path):
    with ChatServer(reply=slow_root(50), latency_s=0.3) as chat:
        srv = Served(
            ["--corpus", str(store), "--model", f"openai:slow@{chat.base_url}"]
            + ["--shutdown-grace", "1"],
            tmp_path,
        )
        results: list = []
        thread = _ask_in_thread(srv, results)
        srv.wait_log(r"run r1: started")
        time.sleep(0.5)
        srv.proc.send_signal(signal.SIGTERM)
        assert srv.proc.wait(30) == 0
        thread.join(30)
        log = srv.text()
        assert re.search(r"run r1: cancelled after .*server shutting down", log), log
        assert len(chat.requests) < 50
        assert isinstance(results[0], openai.InternalServerError), results
        assert results[0].status_code == 503 and "shutting down" in results[0].message
        assert "Traceback" not in log


@pytest.mark.parametrize(
    ("argv", "env", "message"),
    [
        (
            ["--api-key-env", "RLM_DOCS_TEST_UNSET_KEY"],
            {},
            "--api-key-env RLM_DOCS_TEST_UNSET_KEY: environment variable RLM_DOCS_TEST_UNSET_KEY "
            "is not set or empty",
        ),
        ([], {"RLM_DOCS_MODEL": "bogus"}, "RLM_DOCS_MODEL=bogus: model 'bogus': expected"),
        (["--model", "human"], {}, "model 'human': a person at a terminal cannot serve"),
        (["--max-runs", "0"], {}, "argument --max-runs: must be >= 1, got 0"),
    ],
)
def test_serve_flag_errors_are_one_line(store, tmp_path, argv, env, message):
    run = subprocess.run(
        [sys.executable, "-m", "rlm_docs", "serve", "--corpus", str(store), *argv],
        capture_output=True,
        text=True,
        env=dict(os.environ) | {"RLM_DOCS_HOME": str(tmp_path)} | env,
        timeout=60,
    )
    assert run.returncode == 2
    assert run.stderr.startswith(f"rlm-docs serve: error: {message}"), run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
