"""`eval --anytime 0.25,0.5`: when each share of the budget is spent, the model is asked for its
best answer so far in a side turn; each answer is recorded as its own event in the trajectory
and scored in the question's results row, so one run gives accuracy at several budgets."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rlm_docs.engine import RLM
from rlm_docs.engine.trajectory import load_trajectory
from rlm_docs.governor import Budget
from rlm_docs.models import ScriptedClient
from tests.fixtures.engine import repl
from tests.fixtures.eval.support import QUESTIONS, build_store

ROOT = Path(__file__).resolve().parent.parent
ANSWER = {"answer": ["$4.2 billion"], "citations": [{"file": "acme_2022_10k", "page": 2}]}
SCRIPT = [
    repl("hits = search('Acme revenue 2022')"),  # turn 1: a quarter of 4 steps spent
    "FINAL($1.0 billion -- acme_2022_10k page 1)",  # the answer at 25%
    repl("text = page('acme_2022_10k', 2)"),  # turn 2: half spent
    "FINAL($4.2 billion -- acme_2022_10k page 2)",  # the answer at 50%
    repl(f"res = {ANSWER!r}") + "\nFINAL_VAR(res)",  # turn 3: the run's own answer
]


def _eval(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    (tmp_path / "root.json").write_text(json.dumps(SCRIPT))
    argv = [
        "eval",
        "--dataset",
        str(QUESTIONS),
        "--corpus",
        str(build_store(tmp_path / "store")),
        "--system",
        "rlm",
        "--model",
        f"scripted:{tmp_path / 'root.json'}",
        "--limit",
        "1",
        "--workers",
        "1",
        "--max-steps",
        "4",
        "--no-progress",
        "--out",
        str(tmp_path / "run"),
        *extra,
    ]
    return subprocess.run(
        [sys.executable, "-m", "rlm_docs", *argv],
        cwd=ROOT,
        env=os.environ | {"RLM_DOCS_HOME": str(tmp_path / "home")},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_an_anytime_run_records_and_scores_the_answer_at_each_share(tmp_path):
    done = _eval(tmp_path, "--anytime", "0.25,0.5")
    assert done.returncode == 0, done.stderr
    [row] = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").open()]
    assert row["answer"] == ["$4.2 billion"] and row["correct"]
    first, second = row["anytime"]
    assert (first["shares"], first["axis"], first["after_turn"]) == ([0.25], "steps", 1)
    assert first["answer"] == ["$1.0 billion"] and not first["correct"]
    assert (second["shares"], second["after_turn"]) == ([0.5], 2)
    assert second["answer"] == ["$4.2 billion"] and second["correct"]
    assert second["citations"] == [{"file": "acme_2022_10k", "page": 2}]
    assert first["steps"] == 2 and second["steps"] == 4  # each side turn is a root call
    assert row["steps"] == 5
    assert row["budget"]["steps"]["used"] == 3  # side turns take no step of the budget


def test_a_checkpoint_is_its_own_event_in_the_trajectory(tmp_path):
    store = build_store(tmp_path / "store")
    rlm = RLM(
        store,
        model=ScriptedClient(SCRIPT),
        budget=Budget(max_steps=4),
        log_dir=tmp_path,
        anytime=[0.5, 0.25],
    )
    pred = rlm.ask("What was Acme revenue for fiscal 2022?")
    turns = load_trajectory(pred.trajectory).iterations
    marks = [(t.extra.get("anytime"), t.final_answer) for t in turns]
    assert marks == [
        (None, None),
        ([0.25], "$1.0 billion -- acme_2022_10k page 1"),
        (None, None),
        ([0.5], "$4.2 billion -- acme_2022_10k page 2"),
        (None, json.dumps(ANSWER)),
    ]
    # the side turns are not part of the conversation: turn 2 follows turn 1's output
    assert "Checkpoint" not in json.dumps(turns[2].prompt)


def test_without_anytime_there_is_no_side_turn(tmp_path):
    rlm = RLM(build_store(tmp_path / "store"), model=ScriptedClient(SCRIPT[::2]))
    pred = rlm.ask("What was Acme revenue for fiscal 2022?")
    assert pred.anytime == [] and "anytime" not in pred.to_madqa()


@pytest.mark.parametrize("shares", ["0", "1", "0.5,0.5", "half"])
def test_a_bad_share_is_one_line_and_exit_2(tmp_path, shares):
    done = _eval(tmp_path, "--anytime", shares)
    assert done.returncode == 2 and "--anytime" in done.stderr and "Traceback" not in done.stderr
