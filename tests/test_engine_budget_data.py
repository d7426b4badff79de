"""`budget()` in the REPL: what is left on every axis, read from the run's governor through the
sandbox's host-call mechanism, so the values model code sees are the governor's own."""

import json
from pathlib import Path

import pytest

from rlm_docs.engine import RLM
from rlm_docs.engine.host_functions import HostFunctions
from rlm_docs.engine.trajectory import load_trajectory
from rlm_docs.governor import Budget, Governor
from rlm_docs.models import ScriptedClient
from tests.fixtures.engine import repl, saved_store

DOCS = {"acme_2020_10k": ["Cover.", "Total revenue was $412 million in 2020."]}
AXES = {"steps", "sub_calls", "input_tokens", "output_tokens", "cost_usd", "wall_s", "depth"}
SUB_USAGE = {"input_tokens": 300, "output_tokens": 20}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return saved_store(tmp_path_factory, DOCS)


def test_host_budget_equals_the_governor_after_each_call():
    gov = Governor(Budget(max_steps=5, max_sub_calls=4, max_input_tokens=10_000, max_depth=2))
    sub = ScriptedClient([{"text": "a", "usage": SUB_USAGE}] * 3)
    host = HostFunctions(gov, sub)
    for n in range(3):
        seen = host.functions()["budget"]()
        truth = gov.remaining()
        assert set(seen) == AXES
        for axis in AXES - {"wall_s"}:
            assert seen[axis] == truth[axis], axis
        assert seen["sub_calls"] == {"limit": 4, "used": n, "left": 4 - n, "share_used": n / 4}
        assert seen["input_tokens"]["used"] == gov.totals()["input_tokens"] == 300 * n
        host.llm_query(f"question {n}")
    assert gov.remaining()["sub_calls"]["left"] == 1
    assert gov.remaining()["cost_usd"] == {
        "limit": None,
        "used": 0.0,
        "left": None,
        "share_used": None,
    }


def test_a_child_sees_the_tightest_of_its_own_and_its_parents_limits():
    parent = Governor(Budget(max_steps=10, max_sub_calls=10, max_depth=1))
    for _ in range(6):
        parent.step()
    child = parent.child(1.0)
    left = child.remaining()
    assert left["steps"]["left"] == 4 and left["depth"] == {
        "limit": 1,
        "used": 1,
        "left": 0,
        "share_used": 1.0,
    }


def test_budget_in_the_repl_tracks_each_sub_call(store, tmp_path):
    code = (
        "import json\n"
        "seen = [budget()]\n"
        "for q in ['a', 'b']:\n"
        "    llm_query(q)\n"
        "    seen.append(budget())\n"
        "print(json.dumps(seen))"
    )
    root = ScriptedClient(
        [
            {"text": repl(code), "usage": {"input_tokens": 1000, "output_tokens": 50}},
            "FINAL($412 million)",
            '{"answer": ["$412 million"], "citations": []}',
        ]
    )
    sub = ScriptedClient([{"text": "x", "usage": SUB_USAGE}] * 2)
    budget = Budget(max_steps=6, max_sub_calls=5, max_input_tokens=50_000)
    rlm = RLM(store, model=root, sub_model=sub, budget=budget, log_dir=tmp_path)
    pred = rlm.ask("What was Acme's 2020 revenue?")
    cell = load_trajectory(pred.trajectory).iterations[0].code_blocks[0].result
    seen = json.loads(cell.stdout)
    ledger = rlm.ledger.entries
    for n, snapshot in enumerate(seen):
        spent = ledger[: 1 + n]  # the first root call, then one sub-call per snapshot
        assert snapshot["sub_calls"]["used"] == n and snapshot["sub_calls"]["left"] == 5 - n
        assert snapshot["input_tokens"]["used"] == sum(e.input_tokens for e in spent)
        assert snapshot["input_tokens"]["left"] == 50_000 - snapshot["input_tokens"]["used"]
        assert snapshot["steps"] == {"limit": 6, "used": 1, "left": 5, "share_used": 0.1667}
        assert snapshot["output_tokens"]["used"] == sum(e.output_tokens for e in spent)


def test_the_prediction_keeps_the_share_used_and_what_was_left(store, tmp_path):
    replies = [repl("x = 1"), "FINAL($412 million)", '{"answer": ["$412 million"]}']
    root = ScriptedClient(replies)
    rlm = RLM(store, model=root, budget=Budget(max_steps=4, max_sub_calls=10), log_dir=tmp_path)
    pred = rlm.ask("What was Acme's 2020 revenue?")
    record = pred.to_madqa()["budget"]
    assert record["steps"] == {"limit": 4, "used": 2, "left": 2, "share_used": 0.5}
    assert record["sub_calls"] == {"limit": 10, "used": 0, "left": 10, "share_used": 0.0}
    assert record["cost_usd"]["share_used"] is None  # no dollar limit
    assert load_trajectory(pred.trajectory).result.extra["budget"] == record
