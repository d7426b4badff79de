"""The finishing protocol: how `answer["ready"]`, FINAL markers and the confirmation turn end
a run (see `rlm_docs.engine.loop`)."""

from pathlib import Path

import pytest

from rlm_docs.engine import RLM
from rlm_docs.engine.records import Trajectory
from rlm_docs.governor import Budget
from rlm_docs.models import ScriptedClient
from tests.fixtures.engine import repl, saved_store

DOCS = {"acme_2020_10k": ["Cover.", "Total revenue was $4,625 million in 2020."]}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return saved_store(tmp_path_factory, DOCS)


def run(store: Path, replies: list[str], **kwargs):
    root = ScriptedClient(replies)
    budget = kwargs.pop("budget", None)
    rlm = RLM(store, model=root, sub_model=ScriptedClient([]), budget=budget, **kwargs)
    pred = rlm.ask("What was Acme's 2020 revenue?")
    return pred, Turns(root, rlm.last_trajectory)


class Turns:
    """The root turns a scripted model was asked (extraction calls left out) and the records."""

    def __init__(self, root: ScriptedClient, trajectory: Trajectory) -> None:
        pairs = zip(root.calls, root.purposes, strict=True)
        self.calls = [c for c, p in pairs if p and p.role == "root"]
        self.iterations = trajectory.iterations


# Prints 4.625 and answers 4.62: a value the answer does not hold, so it is confirmed.
FINISH_PRINTING = repl(
    "v = 4625 / 1000\nprint(f'revenue: {v} billion')\n"
    "answer['values'] = [f'${v:.2f} billion']\nanswer['ready'] = True"
)


def test_a_finishing_cell_that_printed_gets_one_confirmation_turn_and_may_keep(store):
    pred, root = run(store, [FINISH_PRINTING, "Looks right."])
    assert pred.answer == ["$4.62 billion"] and pred.stop_reason == "final"
    assert pred.steps == 2 and len(root.calls) == 2
    shown = root.calls[1][-1]["content"]
    assert "revenue: 4.625 billion" in shown  # the output it never saw before
    assert 'answer["values"] = ["$4.62 billion"]' in shown and "reply without code" in shown
    assert "Continue with" not in shown  # no invitation that contradicts the question asked
    assert root.iterations[-1].confirmation is True


def test_an_answer_the_cell_printed_whole_is_not_quoted_again(store):
    long = "Revenue rose 12% to $4,625 million; the implications are higher margins. " * 3
    cell = repl(
        f"answer['content'] = {long!r}\nprint(answer['content'])\nprint(len(answer['content']))\n"
        "answer['ready'] = True"
    )
    pred, root = run(store, [cell, "Looks right."])
    shown = root.calls[1][-1]["content"]
    assert shown.count(long.strip()) == 1 and "printed above" in shown
    assert pred.stop_reason == "final" and pred.steps == 2


def test_the_confirmation_turn_may_change_the_answer_in_code(store):
    fix = repl("answer['values'] = ['$4,625 million']")
    pred, root = run(store, [FINISH_PRINTING, fix])
    assert pred.answer == ["$4,625 million"] and pred.steps == 2


def test_the_confirmation_turn_may_answer_with_final_outside_code(store):
    pred, _ = run(store, [FINISH_PRINTING, 'FINAL({"answer": ["$4.625 billion"]})'])
    assert pred.answer == ["$4.625 billion"]


def test_the_confirmation_turn_may_reopen_the_run(store):
    reopen = repl("answer['ready'] = False\nprint(page('acme_2020_10k', 2))")
    finish = repl("answer['values'] = ['$4,625 million']\nanswer['ready'] = True")
    pred, root = run(store, [FINISH_PRINTING, reopen, finish])
    assert pred.answer == ["$4,625 million"] and pred.steps == 3
    assert "Total revenue was $4,625 million" in root.calls[2][-1]["content"]


def test_an_erroring_finishing_cell_never_finalizes(store):
    broken = repl("answer['content'] = 'x'\nanswer['ready'] = True\n1 / 0")
    fixed = repl("answer['content'] = '$4,625 million'\nanswer['ready'] = True")
    pred, root = run(store, [broken, fixed])
    assert pred.answer == ["$4,625 million"] and pred.steps == 2
    shown = root.calls[1][-1]["content"]
    assert "ZeroDivisionError" in shown and "did not finish" in shown


def test_a_silent_finishing_cell_ends_the_run_at_once(store):
    silent = repl("answer['content'] = '$4,625 million'\nanswer['ready'] = True")
    pred, root = run(store, [silent])
    assert pred.answer == ["$4,625 million"] and pred.steps == 1 and len(root.calls) == 1


def test_final_outside_code_ends_the_run_at_once_even_after_printing(store):
    pred, root = run(store, [repl("print('checked')") + '\nFINAL({"answer": ["$4,625 million"]})'])
    assert pred.answer == ["$4,625 million"] and pred.steps == 1 and len(root.calls) == 1


def test_no_confirm_final_ends_at_once(store):
    pred, root = run(store, [FINISH_PRINTING], confirm_final=False)
    assert pred.answer == ["$4.62 billion"] and pred.steps == 1 and len(root.calls) == 1


def test_with_no_step_left_the_answer_stands_without_confirmation(store):
    pred, root = run(store, [FINISH_PRINTING], budget=Budget(max_steps=1))
    assert pred.answer == ["$4.62 billion"] and pred.stop_reason == "final"
    assert len(root.calls) == 1


def test_the_answer_record_travels_from_the_answer_dict_to_the_prediction(store):
    cell = repl(
        "answer['values'] = ['$4,625 million']\n"
        "answer['explanation'] = 'Total revenue line, acme_2020_10k page 2.'\n"
        "answer['caveat'] = 'Revenue net of returns; gross is not reported.'\n"
        "cite('acme_2020_10k', 2)\nprint(page('acme_2020_10k', 2))\nanswer['ready'] = True"
    )
    pred, root = run(store, [cell, "Keep it."])
    shown = root.calls[1][-1]["content"]
    assert 'answer["values"] = ["$4,625 million"]' in shown
    assert 'answer["explanation"] = Total revenue line' in shown and 'answer["caveat"]' in shown
    assert pred.answer == ["$4,625 million"]
    assert pred.explanation == "Total revenue line, acme_2020_10k page 2."
    assert pred.caveat == "Revenue net of returns; gross is not reported."
    assert pred.citations == [{"file": "acme_2020_10k", "page": 2}]


def test_final_with_the_record_as_json_and_a_refusal_with_a_caveat(store):
    final = (
        'FINAL({"values": ["Not answerable"], "explanation": "", '
        '"caveat": "The filing gives no figure for 2019."})'
    )
    pred, _ = run(store, [repl("print(page('acme_2020_10k', 2))"), final])
    assert pred.answer == ["Not answerable"] and pred.caveat.startswith("The filing gives")
    assert pred.citations == []  # a refusal rests on no page
    record = pred.to_madqa()
    assert (record["answer"], record["explanation"]) == (["Not answerable"], "")
    assert record["caveat"] == "The filing gives no figure for 2019."


# -- when the confirmation turn is skipped (`rlm_docs.engine.finishing`) ----------------------


def test_output_holding_only_the_answer_and_the_models_labels_ends_the_run_at_once(store):
    cell = repl(
        "v = 4625 / 1000\nanswer['values'] = [f'${v:.2f} billion']\n"
        "print('answer:', answer['values'])\nanswer['ready'] = True"
    )
    pred, root = run(store, [cell])
    assert pred.answer == ["$4.62 billion"] and pred.stop_reason == "final"
    assert pred.steps == 1 and len(root.calls) == 1
    assert root.iterations[-1].confirmation is False and "warnings" not in pred.info


def test_a_printed_value_that_differs_from_the_answer_is_confirmed(store):
    pred, root = run(store, [FINISH_PRINTING, "Looks right."])
    assert pred.steps == 2 and "4.625" in root.calls[1][-1]["content"]


def test_printed_page_text_is_confirmed(store):
    cell = repl(
        "answer['values'] = ['$4,625 million']\nprint(page('acme_2020_10k', 2))\n"
        "answer['ready'] = True"
    )
    pred, root = run(store, [cell, "Keep it."])
    assert pred.steps == 2 and "Total revenue was" in root.calls[1][-1]["content"]


CITE_UNREAD = repl(
    "answer['values'] = ['$4,625 million']\ncite('acme_2020_10k', 2)\n"
    "print(answer['values'])\nanswer['ready'] = True"
)


def test_a_warning_on_the_finishing_cell_is_confirmed_even_when_the_output_is_the_answer(store):
    pred, root = run(store, [CITE_UNREAD, "Keep it."])
    assert pred.steps == 2
    shown = root.calls[1][-1]["content"]
    assert "cited without reading it" in shown and "acme_2020_10k p.2" in shown
    assert "warnings" not in pred.info  # the model saw it


def test_a_warning_on_a_silent_finishing_cell_is_confirmed(store):
    cell = repl(
        "answer['values'] = ['$4,625 million']\ncite('acme_2020_10k', 2)\nanswer['ready'] = True"
    )
    pred, root = run(store, [cell, "Keep it."])
    assert pred.steps == 2 and "cited without reading it" in root.calls[1][-1]["content"]


def test_a_warning_no_turn_showed_is_kept_in_the_answer_record(store):
    pred, _ = run(store, [CITE_UNREAD], confirm_final=False)
    assert pred.steps == 1
    [warning] = pred.info["warnings"]
    assert warning.startswith("[note: cited without reading it") and "acme_2020_10k p.2" in warning
    assert pred.to_madqa()["info"]["warnings"] == [warning]


def test_a_warning_is_kept_when_no_step_is_left_to_confirm(store):
    pred, root = run(store, [CITE_UNREAD], budget=Budget(max_steps=1))
    assert len(root.calls) == 1 and "cited without reading it" in pred.info["warnings"][0]


def test_a_warning_with_final_outside_code_is_kept(store):
    reply = repl("cite('acme_2020_10k', 2)") + '\nFINAL({"answer": ["$4,625 million"]})'
    pred, root = run(store, [reply])
    assert len(root.calls) == 1 and "acme_2020_10k p.2" in pred.info["warnings"][0]


def test_the_confirmation_turn_quotes_a_long_answer_whole(store):
    long = "The total revenue line of the income statement, read on page 2. " * 60  # ~3,900
    cell = repl(
        f"answer['values'] = ['$4,625 million']\nanswer['explanation'] = {long!r}\n"
        "print(page('acme_2020_10k', 2))\nanswer['ready'] = True"
    )
    pred, root = run(store, [cell, "Keep it."])
    shown = root.calls[1][-1]["content"]
    assert long.strip() in shown and "more characters truncated" not in shown
    assert pred.explanation == long.strip()
