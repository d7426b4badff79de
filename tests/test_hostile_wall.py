"""`--max-wall` bounds the whole question: model calls in flight, retries, and host functions.

Against the loopback chat server: one that never answers is cut off at the deadline (not after
the SDK's timeout and every retry), and retries are announced on stderr as they happen.
"""

import time
from pathlib import Path

import pytest

from rlm_docs.cli import main
from rlm_docs.corpus import Corpus
from rlm_docs.engine import RLM
from rlm_docs.engine.trajectory import load_trajectory
from rlm_docs.governor import Budget
from rlm_docs.models import ScriptedClient
from tests.servers.chat import ChatServer

DOCS = {"memo": ["The widget budget for 2024 was $12 million.", "Nothing else of note."]}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return Corpus.from_documents(DOCS).save(tmp_path_factory.mktemp("corpus") / "store")


@pytest.fixture(autouse=True)
def no_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RLM_DOCS_CACHE", "off")


@pytest.mark.parametrize("flavor", ["openai", "mistral"])
def test_max_wall_cuts_off_a_server_that_never_answers(store, tmp_path, capsys, flavor) -> None:
    with ChatServer(latency_s=3600, flavor=flavor) as srv:
        url = srv.base_url if flavor == "openai" else srv.url
        started = time.monotonic()
        code = main(
            [
                "ask",
                "How much was the widget budget?",
                "--corpus",
                str(store),
                "--model",
                f"{flavor}:slow-model@{url}",
                "--max-wall",
                "3",
                "--log-dir",
                str(tmp_path),
            ]
        )
        took = time.monotonic() - started
    out = capsys.readouterr().out
    assert code == 0 and "stop: budget" in out
    assert took < 20  # 3 s of wall budget plus start-up, not the SDK's 120 s times 6 attempts
    assert len(srv.requests) == 1  # no retry was started past the deadline


def test_retries_are_announced_as_they_happen(store, tmp_path, capsys) -> None:
    with ChatServer(reply=lambda m: "FINAL(twelve million)") as srv:
        srv.fail(503).fail(503)
        args = ["ask", "How much?", "--corpus", str(store), "--log-dir", str(tmp_path)]
        args += ["--model", f"openai:flaky-model@{srv.base_url}"]
        assert main(args) == 0
        quiet = capsys.readouterr().err
        srv.fail(503).fail(503)
        assert main([*args, "-v"]) == 0
        loud = capsys.readouterr().err
    assert quiet.count("rlm-docs ask: retrying:") == 1 and "attempt 1 failed (HTTP 503" in quiet
    assert "-v shows every attempt" in quiet
    assert loud.count("rlm-docs ask: retrying:") == 2 and "attempt 2 failed" in loud


def test_time_in_host_functions_counts_toward_the_wall_budget(store, tmp_path) -> None:
    sub = ScriptedClient([lambda m: time.sleep(0.2) or "ok"] * 1000)
    code = "while True:\n    try:\n        llm_query('x')\n    except BudgetExceeded:\n        pass"
    root = ScriptedClient([f"```repl\n{code}\n```", "FINAL(x)", "{}"])
    rlm = RLM(store, model=root, sub_model=sub, budget=Budget(max_wall_s=5, max_sub_calls=None))
    rlm.log_dir = tmp_path
    started = time.monotonic()
    pred = rlm.ask("q?")
    assert time.monotonic() - started < 15  # the cell's own 30 s limit did not have to fire
    block = load_trajectory(pred.trajectory).iterations[0].code_blocks[0].result
    assert block.restarted and "wall-time budget ran out" in block.stderr
    # the cell stopped with a tenth of the wall budget left, kept for the forced answer
    assert pred.stop_reason == "forced" and pred.raw_answer == "x"
    assert pred.wall_s < 10
