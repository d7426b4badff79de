"""Answers cross from the sandbox to the host cut to `MAX_ANSWER_CHARS`, marked where they were
cut (a parent model reads the mark in its child's answer), and a long answer is written to the
trajectory once. Sizes are scaled down from the review's 200,000,000 characters: without the
cap the trajectory grew by two bytes (and the host by ~8 bytes) per character of the value."""

import json
from pathlib import Path

import pytest

from rlm_docs.engine import RLM
from rlm_docs.engine.loop import MAX_ANSWER_CHARS
from rlm_docs.engine.trajectory import load_trajectory
from rlm_docs.models import ScriptedClient
from tests.fixtures.engine import repl, saved_store

BIG = 20_000_000
DONE = '{"answer": ["x"], "citations": []}'


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return saved_store(tmp_path_factory, {"memo": ["The budget was $12 million."]})


def test_a_huge_final_var_is_cut_with_a_mark_and_written_once(store, tmp_path) -> None:
    rlm = RLM(
        store,
        model=ScriptedClient([repl(f"big = 'x' * {BIG}") + "\nFINAL_VAR(big)", DONE]),
        log_dir=tmp_path,
    )
    pred = rlm.ask("What was the budget?")
    assert pred.stop_reason == "final"
    assert pred.raw_answer.startswith("x" * MAX_ANSWER_CHARS + "[answer cut here: ")
    assert f"{BIG - MAX_ANSWER_CHARS:,} more characters not returned" in pred.raw_answer
    assert Path(pred.trajectory).stat().st_size < 1.5 * MAX_ANSWER_CHARS
    traj = load_trajectory(pred.trajectory)
    assert traj.result.raw_answer == traj.iterations[-1].final_answer == pred.raw_answer


def test_the_answer_dict_keeps_ready_when_its_content_is_cut(store, tmp_path) -> None:
    code = f"answer['content'] = ['y' * {BIG}, 'more']\nanswer['ready'] = True"
    rlm = RLM(store, model=ScriptedClient([repl(code), DONE]), log_dir=tmp_path)
    pred = rlm.ask("What was the budget?")
    assert pred.stop_reason == "final"
    content = json.loads(pred.raw_answer)["content"]  # the raw value is the whole answer dict
    assert len(content) == 2 and content[0].endswith("answers are limited to 100,000 characters]")
    assert content[1].startswith("[answer cut here: 4 more characters not returned")


def test_children_answers_are_cut_and_the_parent_model_sees_the_mark(store, tmp_path) -> None:
    def reply(messages: list[dict]) -> str:
        if "sub question" in messages[1]["content"]:
            return repl(f"big = 'y' * {BIG}") + "\nFINAL_VAR(big)"
        if any(m["role"] == "assistant" for m in messages):
            return f"FINAL({DONE})"
        calls = "\n".join(f"a{i} = rlm_query('sub question')" for i in range(3))
        return repl(calls + "\nprint(len(a0), a0[-120:])")

    root = ScriptedClient([reply] * 20)
    rlm = RLM(store, model=root, log_dir=tmp_path)
    pred = rlm.ask("What was the budget?")
    assert pred.stop_reason == "final"
    shown = root.calls[-1][-1]["content"]  # the parent's next prompt: its cell's output
    assert f"{BIG - MAX_ANSWER_CHARS:,} more characters not returned" in shown
    # three children's answers, each written once: the trajectory is not 3 x 3 copies
    assert Path(pred.trajectory).stat().st_size < 4 * MAX_ANSWER_CHARS
    calls = load_trajectory(pred.trajectory).iterations[0].code_blocks[0].result.sub_calls
    assert len(calls) == 3
    for call in calls:
        assert call.response == call.child.result.answer == call.child.iterations[-1].final_answer
        assert len(call.response) < MAX_ANSWER_CHARS + 200
