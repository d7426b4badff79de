"""Workload scorers on hand cases, and their dispatch from `score_prediction` by `scorer`."""

import pytest

from rlm_docs.errors import DatasetError
from rlm_docs.eval.dataset import parse_question
from rlm_docs.eval.scoring import score_prediction
from rlm_docs.eval.workload_scoring import (
    numbers,
    oolong_candidate,
    oolong_score,
    pair_set,
    set_f1,
)


@pytest.mark.parametrize(
    ("response", "candidate"),
    [
        ("Label: entity", "entity"),
        ("entity", "entity"),
        ("The answer is clearly numeric value", "value"),  # no colon, long: last word
        ("Answer: **[37]**", "37"),
        ("Answer: location is more common than entity", "more common"),
        ("Answer: x is less common than y", "less common"),
        ("time: 10:30", "30"),
    ],
)
def test_oolong_parser(response: str, candidate: str) -> None:
    assert oolong_candidate(response) == candidate


def test_oolong_scores() -> None:
    assert oolong_score("Label: human being", "human being", "label") == 1.0
    assert oolong_score("Label: Human being", "human being", "label") == 0.0  # case-sensitive
    assert oolong_score("Answer: a is more common than b", "more common than", "comparison") == 1
    assert oolong_score("Answer: a is same frequency as b", "same frequency as", "comparison") == 1
    assert oolong_score("Answer: a is less common than b", "more common than", "comparison") == 0
    assert oolong_score("Answer: 37", "37", "numeric") == 1.0
    assert oolong_score("Answer: 35", "37", "numeric") == pytest.approx(0.5625)
    assert oolong_score("Answer: 40", "37", "numeric") == pytest.approx(0.75**3)
    assert oolong_score("Answer: 37 questions", "37", "numeric") == 0.0
    assert oolong_score("Answer: 37", "37x", "label") == 0.0


def test_pair_f1_and_edge_conventions() -> None:
    assert pair_set("(3, 1)\n(1,3) (2, 2) ( 5 , 4 )") == {(1, 3), (4, 5)}
    assert set_f1(set(), set()) == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    assert set_f1({(1, 2)}, set())["f1"] == 0.0
    assert set_f1(set(), {(1, 2)})["f1"] == 0.0
    got = set_f1({(1, 2), (1, 3), (9, 99)}, {(1, 2), (1, 3), (2, 3), (3, 4)})
    assert got["precision"] == pytest.approx(2 / 3) and got["recall"] == 0.5
    assert got["f1"] == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))


def test_needle_numbers() -> None:
    assert numbers("codes 4,821,937 and 1234567 (page 12, year 2023)") == {"4821937", "1234567"}


def _question(**extra) -> object:
    record = {"id": "q", "question": "?", "answer_variants": [["37"]], **extra}
    return parse_question(record, "t:1")


def test_dispatch_by_scorer_field() -> None:
    q = _question(scorer="oolong", answer_type="numeric")
    got = score_prediction(q, {"answer": ["Answer: 36"], "citations": []})
    # a count off by one earns partial credit in the score but is not a correct count
    assert got["score"] == 0.75 and got["stage"] == "oolong" and got["correct"] is False
    assert score_prediction(q, {"answer": ["Answer: 34"]})["correct"] is False
    assert score_prediction(q, {"answer": ["Answer: 37"]})["correct"] is True
    pairs = _question(scorer="oolong-pairs", answer_variants=[["(1, 2)", "(2, 3)"]])
    long_answer = [f"({i}, {i + 1})" for i in range(1, 400)]  # far past the 2,000-char cap
    got = score_prediction(pairs, {"answer": long_answer})
    assert got["stage"] == "oolong-pairs" and got["recall"] == 1.0
    assert got["score"] == pytest.approx(2 * (2 / 399) / (2 / 399 + 1))
    empty = _question(scorer="oolong-pairs", answer_variants=[["none"]])
    assert score_prediction(empty, {"answer": ["No pairs qualify."]})["score"] == 1.0
    assert score_prediction(empty, {"answer": []})["score"] == 0.0  # no answer at all
    needle = _question(scorer="needle", answer_variants=[["4821937", "1234567"]])
    got = score_prediction(needle, {"answer": ["4821937"]})
    assert got["score"] == pytest.approx(2 / 3) and got["precision"] == 1.0


def test_unknown_scorer_is_a_dataset_error() -> None:
    with pytest.raises(DatasetError, match="t:1: field 'scorer' must be one of"):
        _question(scorer="bleu")
