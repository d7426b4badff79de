"""Scoring the answer record: values only, the quoted real-model cases, refusals with caveats,
old records, prose golds that need a judge, and the counts the summary reports."""

import pytest

from rlm_docs.answer_record import from_old_answer, stored_answer
from rlm_docs.eval.aggregate import decided_text, headline_accuracy, summarize
from rlm_docs.eval.judge import Verdict, judge_prompt
from rlm_docs.eval.numeric import numeric_verdict, without_asides
from rlm_docs.eval.paired import paired_difference
from rlm_docs.eval.prose_gold import is_prose_gold, is_prose_item
from rlm_docs.eval.scoring import score_prediction
from rlm_docs.questions import Question

ADOBE = (
    "No the operating margins of Adobe have recently declined from 36.8% in FY 2021 to 34.6% "
    "in FY2022. A drop by 2.2% in a year."
)
LINCOLN_CAVEAT = "the corpus has no survey about Lincoln; the closest is a 2019 poll"
RATIO_EXPLANATION = (
    "Gross profit $9,912 million / total assets $15,803 million (FY ended January 28, 2023)"
)


def q(gold: list[list[str]], qid: str = "q") -> Question:
    return Question(id=qid, question="?", answer_variants=gold)


def scored(gold: list[list[str]], record: dict, judge=None) -> dict:
    return score_prediction(q(gold), {"citations": []} | record, judge)


@pytest.mark.parametrize(
    ("gold", "record"),
    [
        # the record as the prompts now produce it
        (
            "0.627",
            {
                "answer": ["0.627"],
                "explanation": RATIO_EXPLANATION,
                "caveat": "using average total assets ... gives 0.595",
            },
        ),
        # the same answer as written before the record existed (old-run rule)
        (
            "0.627",
            {
                "answer": [
                    "0.627",
                    RATIO_EXPLANATION,
                    "Caveat: using average total assets ... gives 0.595",
                ]
            },
        ),
        # the value among its supporting figures: the aside is working, not the value
        (
            "$5818.00",
            {
                "answer": [
                    "$5,818 million (total current assets $19,815M less total current "
                    "liabilities $13,997M at December 31, 2021)"
                ]
            },
        ),
        (
            "$1577.00",
            {
                "answer": [
                    "$1,577 million (purchases of property, plant and equipment (PP&E), FY2018)"
                ]
            },
        ),
    ],
)
def test_the_quoted_right_numbers_are_scored_right(gold, record):
    s = scored([[gold]], record)
    assert (s["stage"], s["score"], s["correct"]) == ("numeric", 1.0, True)


def test_figures_in_the_explanation_never_count_and_a_hedge_is_wrong():
    gold = [["$5818.00"]]
    record = {"answer": ["Not stated"], "explanation": "working capital was $5,818 million"}
    assert scored(gold, record | {"caveat": ""})["score"] == 0.0
    hedge = scored([["0.627"]], {"answer": ["0.627", "0.595"], "caveat": ""})
    assert (hedge["stage"], hedge["score"]) == ("numeric", 0.0)
    assert numeric_verdict(["$5.818 billion", "$5,818 million"], gold) is True  # one value
    assert numeric_verdict(["(3.7) (down from 2.1 in 2021)"], [["-3.7"]]) is True
    assert without_asides("($1.2 million) (see note 4)") == "($1.2 million)  "


def test_refusals_with_a_caveat_are_refusals_in_either_form():
    gold = [["Not answerable"]]
    new = {"answer": ["Not answerable"], "caveat": LINCOLN_CAVEAT}
    old = {"answer": ["Not answerable", f"Caveat: {LINCOLN_CAVEAT}"]}
    for record in (new, old):
        s = scored(gold, record)
        assert (s["stage"], s["score"], s["error_type"]) == ("unanswerable", 1.0, None)
    assert scored(gold, {"answer": ["$4 million"], "caveat": LINCOLN_CAVEAT})["score"] == 0.0


def test_the_old_record_rule():
    assert from_old_answer(["0.627", "Caveat: a", " caveat: b "]) == (["0.627"], "a b")
    assert stored_answer({"answer": "x"}) == (["x"], "", "")
    # a record with a caveat field is read as written, even an item that looks like a caveat
    assert stored_answer({"answer": ["Caveat: y"], "explanation": "e", "caveat": ""}) == (
        ["Caveat: y"],
        "e",
        "",
    )


@pytest.mark.parametrize(
    ("item", "prose"),
    [
        (ADOBE, True),
        ("JnJ sold its inventory 2.7 times in FY2022.", True),  # 8 words
        ("No, Pepsico is not involved in material legal battles.", True),
        ("US sales rose strongly. Abroad they fell.", True),  # 5+ words, a sentence end
        ("Performance is not measured through operating margin", False),  # 7 words, no end
        ("Less well-off", False),
        ("Yes. It decreased.", False),  # a sentence, but 3 words
        ("$8.70", False),
    ],
)
def test_the_prose_rule(item, prose):
    assert is_prose_item(item) is prose


def test_a_prose_gold_needs_a_judge_and_the_judge_reads_the_explanation():
    assert is_prose_gold([[ADOBE]]) and not is_prose_gold([[ADOBE], ["declined"]])
    record = {"answer": ["No"], "explanation": "Margins fell from 36.8% to 34.6%.", "caveat": ""}
    s = scored([[ADOBE]], record)
    assert (s["stage"], s["score"], s["correct"], s["error_type"]) == (
        "needs_judge",
        None,
        None,
        None,
    )
    seen = []

    def judge(question, values, explanation):
        seen.append((values, explanation))
        return Verdict("correct", 1.0)

    s = scored([[ADOBE]], record, judge)
    assert (s["stage"], s["score"]) == ("judge", 1.0)
    assert seen == [(["No"], "Margins fell from 36.8% to 34.6%.")]
    text = judge_prompt("?", ["No"], [[ADOBE]], "Margins fell from 36.8% to 34.6%.")
    assert 'Predicted Answer: ["No"]\nExplanation given with the answer' in text
    assert "Explanation given" not in judge_prompt("?", ["No"], [[ADOBE]])
    # a verbatim gold is exact without a judge
    assert scored([[ADOBE]], {"answer": [ADOBE], "caveat": ""})["stage"] == "exact"


def _row(qid: str, stage: str, score: float | None, anls: float) -> dict:
    correct = None if score is None else score >= 0.5
    return {"id": qid, "stage": stage, "score": score, "correct": correct, "anls": anls}


def test_needs_judge_rows_are_counted_apart_from_the_headline_accuracy():
    rows = [_row(f"d{i}", "numeric", float(i < 9), 1.0 if i < 5 else 0.0) for i in range(11)]
    rows += [_row(f"p{i}", "needs_judge", None, 0.2) for i in range(12)]
    s = summarize(rows)
    assert s["n"] == 23 and s["needs_judge"] == 12
    assert s["accuracy"]["n"] == 11 and s["accuracy"]["value"] == pytest.approx(9 / 11)
    assert s["accuracy"]["correct"] == 9
    assert s["anls_accuracy"]["value"] == pytest.approx(5 / 23)  # every question counts
    assert decided_text(s, "RUN") == (
        "9/11 decided; 12 need --judge (rlm-docs rescore RUN --judge MODEL)"
    )
    assert decided_text(summarize(rows[:11])) == ""
    acc, _ = headline_accuracy(s)
    assert acc is s["accuracy"]


def test_paired_bootstrap_difference():
    same = paired_difference([1, 0, 1, 0], [1, 0, 1, 0])
    assert (same["value"], same["low"], same["high"], same["p_value"]) == (0.0, 0.0, 0.0, 1.0)
    better = paired_difference([1.0] * 30, [1.0] * 15 + [0.0] * 15)
    assert better["value"] == pytest.approx(0.5) and better["n"] == 30
    assert 0.25 < better["low"] < 0.5 < better["high"] <= 0.75
    assert better["p_value"] == pytest.approx(2 / 1001)  # no resample reaches 0
    noisy = paired_difference([1, 0, 1, 0, 1, 0], [0, 1, 0, 1, 1, 0])
    assert noisy["value"] == 0.0 and noisy["low"] < 0 < noisy["high"] and noisy["p_value"] > 0.5
