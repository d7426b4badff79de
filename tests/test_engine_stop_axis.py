"""`stop_axis`: which limit ended a run, recorded as data on the prediction, the trajectory's
result record (root and child runs) and the eval's predictions.parquet."""

import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from rlm_docs.engine import RLM
from rlm_docs.engine.trajectory import load_trajectory
from rlm_docs.eval.runner import EvalSettings, run_eval
from rlm_docs.governor import Budget
from rlm_docs.models import ScriptedClient
from tests.fixtures.engine import repl, saved_store
from tests.fixtures.eval.support import QUESTIONS, build_store

DOCS = {"acme_2020_10k": ["Cover.", "Total revenue was $412 million in 2020."]}
EXTRACTED = '{"answer": ["$412 million"], "citations": []}'


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return saved_store(tmp_path_factory, DOCS)


def reply(text: str, tokens_in: int = 100, tokens_out: int = 10) -> dict:
    """A scripted reply with exact token counts (so token and dollar limits bind exactly)."""
    return {"text": text, "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out}}


def ask(store: Path, tmp_path: Path, replies: list, budget: Budget, **kwargs):
    root = ScriptedClient(replies, model=kwargs.pop("model", "scripted"))
    rlm = RLM(store, model=root, budget=budget, log_dir=tmp_path, **kwargs)
    pred = rlm.ask("What was Acme's 2020 revenue?")
    return pred, load_trajectory(pred.trajectory).result


def test_a_model_that_finishes_has_no_stop_axis(store, tmp_path):
    pred, result = ask(store, tmp_path, ["FINAL($412 million)", EXTRACTED], Budget())
    assert (pred.stop_reason, pred.stop_axis) == ("final", None)
    assert (result.stop_reason, result.stop_axis) == ("final", None)
    assert pred.to_madqa()["stop_axis"] is None


def test_the_step_limit(store, tmp_path):
    replies = [repl("x = 1"), "FINAL($412 million)", EXTRACTED]
    pred, result = ask(store, tmp_path, replies, Budget(max_steps=1))
    assert (pred.stop_reason, pred.stop_axis, pred.steps) == ("forced", "steps", 2)
    assert result.stop_axis == "steps"


def test_the_sub_call_limit(store, tmp_path):
    sub = ScriptedClient(["a note"])
    replies = [repl("note = llm_query('read page 2')"), "FINAL($412 million)", EXTRACTED]
    pred, result = ask(store, tmp_path, replies, Budget(max_sub_calls=1), sub_model=sub)
    assert (pred.stop_reason, pred.stop_axis, pred.sub_calls) == ("forced", "sub_calls", 1)
    assert result.stop_axis == "sub_calls"


def test_an_input_token_limit_that_refuses_even_the_forced_turn(store, tmp_path):
    probe = RLM(store, model=ScriptedClient([repl("x = 1"), "FINAL(x)", EXTRACTED]))
    probe.ask("What was Acme's 2020 revenue?")
    first = probe.ledger.entries[0].input_tokens  # the first root call's
    replies = [repl("x = 1"), "FINAL(never sent)"]
    pred, result = ask(store, tmp_path, replies, Budget(max_input_tokens=int(first * 1.05)))
    assert (pred.stop_reason, pred.stop_axis, pred.steps) == ("budget", "input_tokens", 1)
    assert (result.stop_reason, result.stop_axis) == ("budget", "input_tokens")


def test_an_output_token_limit_used_up_forces_the_last_turn(store, tmp_path):
    replies = [reply(repl("x = 1"), 100, 10), reply("FINAL(never sent)")]
    pred, result = ask(store, tmp_path, replies, Budget(max_output_tokens=10))
    assert (pred.stop_reason, pred.stop_axis, pred.steps) == ("budget", "output_tokens", 1)
    assert (result.stop_reason, result.stop_axis) == ("budget", "output_tokens")


def test_the_dollar_limit(store, tmp_path):
    # gpt-5-mini: $0.25 / $2 per 1M tokens; the first call costs $0.00045 of the $0.0006.
    replies = [reply(repl("x = 1"), 1000, 100), reply("FINAL(never sent)", 1000, 100)]
    budget = Budget(max_cost_usd=0.0006)
    pred, result = ask(store, tmp_path, replies, budget, model="gpt-5-mini")
    assert (pred.stop_reason, pred.stop_axis) == ("budget", "cost_usd")
    assert pred.cost_usd == pytest.approx(0.00045) and result.stop_axis == "cost_usd"


def test_the_wall_limit(store, tmp_path):
    sub = ScriptedClient([lambda m: time.sleep(0.2) or "ok"] * 100)
    code = (
        "while True:\n    try:\n        llm_query('x')\n    except BudgetExceeded:\n        break"
    )
    replies = [repl(code), "FINAL($412 million)", EXTRACTED]
    budget = Budget(max_wall_s=2, max_sub_calls=None)
    pred, result = ask(store, tmp_path, replies, budget, sub_model=sub)
    # Whether the forced turn still fits in the tenth of the wall budget kept for it depends on
    # the machine's load (`forced` if it does, `budget` if not); the axis is the wall either way.
    assert pred.stop_reason in ("forced", "budget") and pred.stop_axis == "wall_s"
    assert (result.stop_reason, result.stop_axis) == (pred.stop_reason, "wall_s")


def test_a_limit_that_cuts_the_confirmation_turn_keeps_the_answer_and_says_why(store, tmp_path):
    finish = repl("print(6 * 7)\nanswer['content'] = '$412 million'\nanswer['ready'] = True")
    pred, result = ask(store, tmp_path, [finish, EXTRACTED], Budget(max_steps=1))
    assert (pred.stop_reason, pred.stop_axis, pred.answer) == ("final", "steps", ["$412 million"])
    assert result.stop_axis == "steps"


def test_a_child_run_records_its_own_stop_axis(store, tmp_path):
    # The child gets two of the parent's steps: one ordinary turn, then its forced turn.
    replies = [
        repl("got = rlm_query('find the revenue')"),  # parent, turn 1
        repl("y = 2"),  # child, turn 1
        "FINAL(child guess)",  # child, forced turn
        "FINAL($412 million)",  # parent, turn 2
        EXTRACTED,
    ]
    pred, result = ask(store, tmp_path, replies, Budget(max_steps=6, max_depth=1))
    assert (pred.stop_reason, pred.stop_axis) == ("final", None)
    (spawn,) = load_trajectory(pred.trajectory).iterations[0].sub_calls
    child = spawn.child.result
    assert (child.answer, child.stop_reason, child.stop_axis) == ("child guess", "forced", "steps")


def test_predictions_parquet_has_a_stop_axis_column(tmp_path):
    settings = EvalSettings(
        dataset=QUESTIONS,
        corpus=build_store(tmp_path / "store"),
        system="rlm",
        model="offline",
        out=tmp_path / "run",
        budget=Budget(max_steps=1),
        progress=False,
    )
    run_eval(settings)
    table = pq.read_table(tmp_path / "run" / "predictions.parquet").to_pylist()
    assert {row["stop_axis"] for row in table} <= {"steps", None}
    assert any(row["stop_axis"] == "steps" for row in table)
