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


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    where = tmp_path_factory.mktemp("attribute")
    globex = [line for line in QUESTIONS.open() if '"q2"' in line]
    (where / "questions.jsonl").write_text("".join(globex))
    done = _cli(
        *("eval", "--dataset", str(where / "questions.jsonl")),
        *("--corpus", str(build_store(where / "store")), "--system", "rlm"),
        *("--model", f"{MODELS}:root", "--sub-model", f"{MODELS}:sub", "--workers", "1"),
        *("--no-progress", "--out", str(where / "run")),
        home=where / "home",
    )
    assert done.returncode == 0, done.stderr
    [row] = [json.loads(line) for line in (where / "run" / "results.jsonl").open()]
    assert row["answer"] == ["Springfield, Oregon"] and row["correct"]
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
        "answer",
        "changed",
        "score",
        "new",
        "calls",
        "cost",
        "prompt",
    ]
    first, second = (line.split() for line in lines[1:])
    assert first[:5] == ["1", "yes", "1.0", "->", "0.0"]
    assert second[:5] == ["2", "no", "1.0", "->", "1.0"]


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
