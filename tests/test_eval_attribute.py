"""`rlm-docs attribute`: re-running a question with one sub-call's reply replaced flags exactly
the sub-call the answer rests on (here the first of two; the root answers with its reply)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.eval.support import QUESTIONS, build_store

ROOT = Path(__file__).resolve().parent.parent
MODELS = "py:tests.fixtures.attribution_models"


def _cli(*argv: str, home: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rlm_docs", *argv],
        cwd=ROOT,
        env=os.environ | {"RLM_DOCS_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=300,
    )


def _eval(where: Path, root: str, ids: tuple[str, ...]) -> list[dict]:
    chosen = [line for line in QUESTIONS.open() if json.loads(line)["id"] in ids]
    (where / "questions.jsonl").write_text("".join(chosen))
    done = _cli(
        *("eval", "--dataset", str(where / "questions.jsonl")),
        *("--corpus", str(build_store(where / "store")), "--system", "rlm"),
        *("--model", f"{MODELS}:{root}", "--sub-model", f"{MODELS}:sub", "--workers", "1"),
        *("--no-progress", "--out", str(where / "run")),
        home=where / "home",
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in (where / "run" / "results.jsonl").open()]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    where = tmp_path_factory.mktemp("attribute")
    [row] = _eval(where, "root", ("q2",))
    assert row["answer"] == ["Springfield, Oregon"] and row["correct"]
    return where / "run", where / "home"


@pytest.fixture(scope="module")
def nested(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two questions answered through a child RLM whose sub-call decides the answer."""
    where = tmp_path_factory.mktemp("nested")
    rows = _eval(where, "nested_root", ("q1", "q2"))
    assert [(r["id"], r["answer"], r["correct"]) for r in rows] == [
        ("q1", ["Springfield, Oregon"], False),
        ("q2", ["Springfield, Oregon"], True),
    ]
    return where / "run", where / "home"


def test_replacing_each_sub_call_flags_exactly_the_one_the_answer_rests_on(run):
    run_dir, home = run
    done = _cli(
        "attribute", str(run_dir), "--question", "q2", "--all", "--replace", "empty", home=home
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == [
        "sub-call",
        "depth",
        "answer",
        "changed",
        "score",
        "new",
        "calls",
        "cost",
        "prompt",
    ]
    first, second = (line.split() for line in lines[1:])
    assert first[:6] == ["1", "0", "yes", "1.0", "->", "0.0"]
    assert second[:6] == ["2", "0", "no", "1.0", "->", "1.0"]


def test_a_text_replacement_that_keeps_the_answer_changes_nothing(run):
    from rlm_docs.eval.attribute import attribute

    [row] = attribute(run[0], "q2", [1], "text:Springfield, Oregon")
    assert (row["answer_changed"], row["score_changed"]) == (False, False)
    assert row["prompt"] == "Which city are Globex headquarters in?"


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--sub-call", "3", "--replace", "empty"], "--sub-call 3: question q2 has sub-calls 1..2"),
        (["--all", "--replace", "blank"], "expected empty, text:STR or model:SPEC"),
        (["--question", "q9"], "no recorded question 'q9'"),
    ],
)
def test_a_bad_request_is_one_line_and_exit_2(run, argv, says):
    base = ["attribute", str(run[0]), "--question", "q2"]
    if argv[0] == "--question":
        base, argv = ["attribute", str(run[0]), *argv, "--all", "--replace", "empty"], []
    done = _cli(*base, *argv, home=run[1])
    assert done.returncode == 2 and says in done.stderr and "Traceback" not in done.stderr


def test_a_child_rlms_sub_calls_are_numbered_depth_first_and_can_be_picked(nested):
    from rlm_docs.eval.attribute import attribute

    city, year = attribute(nested[0], "q2", None, "empty")
    # the child's call comes right after the rlm_query that ran it, before the root's next call
    assert (city["sub_call"], city["depth"], city["prompt"]) == (
        1,
        1,
        "Which city are Globex headquarters in?",
    )
    assert (city["answer_changed"], city["score_was"], city["score"]) == (True, 1.0, 0.0)
    assert (year["sub_call"], year["depth"], year["answer_changed"]) == (2, 0, False)
    [again] = attribute(nested[0], "q2", [1], "text:Springfield")
    assert again["answer"] == ["Springfield"] and not again["score_changed"]


def test_the_run_wide_table_shows_which_sub_calls_mattered(nested):
    run_dir, home = nested
    done = _cli("attribute", str(run_dir), "--all", "--replace", "empty", home=home)
    assert done.returncode == 0, done.stderr
    header, *rows, last = done.stdout.splitlines()
    assert header.split()[:3] == ["question", "sub-call", "depth"]
    cells = [row.split()[:7] for row in rows]
    assert cells == [
        ["q1", "1", "1", "yes", "0.0", "->", "0.0"],  # wrong before and after: answer only
        ["q1", "2", "0", "no", "0.0", "->", "0.0"],
        ["q2", "1", "1", "yes", "1.0", "->", "0.0"],
        ["q2", "2", "0", "no", "1.0", "->", "1.0"],
    ]
    assert last.startswith("2 of 4 sub-calls changed the answer when replaced, 1 the score")


def test_a_sub_call_number_without_a_question_is_refused(nested):
    done = _cli(
        "attribute", str(nested[0]), "--sub-call", "1", "--replace", "empty", home=nested[1]
    )
    assert done.returncode == 2 and "--sub-call N needs --question ID" in done.stderr
