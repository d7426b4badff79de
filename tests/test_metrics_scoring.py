import pytest

from rlm_docs.eval.aggregate import effort_value, summarize
from rlm_docs.eval.judge import Verdict
from rlm_docs.eval.results_row import missing_row
from rlm_docs.eval.scoring import score_prediction
from rlm_docs.questions import Question

Q = Question(
    id="q",
    question="What was revenue?",
    answer_variants=[["$4.2 billion"]],
    evidence=[{"document": "acme", "page": 2}],
)
TEXT_Q = Question(
    id="t",
    question="Which segment grew fastest?",
    answer_variants=[["Consumer Health"]],
    evidence=[{"document": "acme", "page": 2}],
)


def _judge(calls):
    def judge(question, items, explanation):
        calls.append(items)
        return Verdict("partial", 0.5, "verbosity_medium", "")

    return judge


@pytest.mark.parametrize(
    ("question", "answer", "stage", "score"),
    [
        (TEXT_Q, [], "empty", 0.0),
        (TEXT_Q, ["x" * 2100], "too_long", 0.0),
        (TEXT_Q, ["consumer  health"], "exact", 1.0),
        (TEXT_Q, ["Consumer segment"], "judge", 0.5),
        # a numeric gold is settled before the judge, either way
        (Q, ["$4.2 bn"], "numeric", 1.0),
        (Q, ["4,200 million dollars"], "numeric", 1.0),
        (Q, ["$4.9 billion"], "numeric", 0.0),
    ],
)
def test_accuracy_stages_with_a_judge(question, answer, stage, score):
    calls = []
    s = score_prediction(question, {"answer": answer, "citations": []}, _judge(calls))
    assert (s["stage"], s["score"]) == (stage, score)
    assert len(calls) == (stage == "judge")


def test_without_judge_the_anls_stage_decides():
    # "Consumer Healths" vs "Consumer Health": 1 edit over 16 chars -> ANLS* 0.9375 -> correct
    s = score_prediction(
        TEXT_Q, {"answer": "Consumer Healths", "citations": [{"file": "ACME", "page": 2}]}
    )
    assert s["stage"] == "anls" and s["score"] == 1.0 and s["anls"] == pytest.approx(15 / 16)
    assert s["page_f1"] == 1.0 and s["error_type"] is None
    wrong = score_prediction(Q, {"answer": ["$9"], "citations": [{"file": "acme", "page": 7}]})
    assert wrong["correct"] is False and wrong["error_type"] == "navigation"


@pytest.mark.parametrize(
    ("answer", "gold", "anls_said", "correct"),
    [
        # ANLS* passes the first two wrong numbers and fails the right ones
        ("$1.33", "$2.35", True, False),
        ("$2.00", "$5409.00", True, False),
        ("$12,645 million", "$12645.00", False, True),
        ("$12,645 million", "12645.00", False, True),
        ("93.86 days", "93.86", True, True),
    ],
)
def test_numeric_stage_overrules_anls_on_the_quoted_pairs(answer, gold, anls_said, correct):
    q = Question(id="n", question="How much?", answer_variants=[[gold]])
    s = score_prediction(q, {"answer": [answer], "citations": []})
    assert (s["anls"] >= 0.5) is anls_said  # ANLS* kept as its own column
    assert s["stage"] == "numeric" and s["correct"] is correct


def test_unanswerable_gold_counts_a_refusal_right_and_any_answer_wrong():
    q = Question(
        id="u", question="What is the CEO's shoe size?", answer_variants=[["Not answerable"]]
    )
    for answer in (["Not answerable"], ["The documents do not say; cannot determine."], []):
        s = score_prediction(q, {"answer": answer, "citations": []})
        assert (s["stage"], s["score"], s["error_type"]) == ("unanswerable", 1.0, None)
    for answer in (["42"], ["Nike"]):
        s = score_prediction(q, {"answer": answer, "citations": []}, _judge([]))
        assert (s["stage"], s["score"]) == ("unanswerable", 0.0)
        assert s["error_type"] == "comprehension"  # no evidence to blame retrieval on
    crashed = score_prediction(q, {"answer": [], "stop_reason": "error", "error": "boom"})
    assert crashed["correct"] is False and crashed["stage"] == "empty"
    # and an answerable question answered with a refusal is a wrong `refusal`
    s = score_prediction(TEXT_Q, {"answer": ["Not answerable"], "citations": []})
    assert s["correct"] is False and s["error_type"] == "refusal"


def test_evidence_free_and_document_level_questions_get_page_f1_na():
    cited = {"answer": ["Consumer Health"], "citations": [{"file": "acme", "page": 2}]}
    none = Question(id="a", question="Q?", answer_variants=[["Consumer Health"]])
    s = score_prediction(none, cited)
    assert s["page_f1"] is None and s["doc_f1"] is None and s["correct"]
    doc_level = Question(
        id="b",
        question="Q?",
        answer_variants=[["Consumer Health"]],
        evidence=[{"document": "acme", "page": None}, {"document": "globex", "page": None}],
    )
    s = score_prediction(doc_level, cited)
    assert s["page_f1"] is None and s["doc_f1"] == pytest.approx(2 / 3)
    wrong = score_prediction(doc_level, cited | {"answer": ["Cars"]})
    assert wrong["error_type"] == "comprehension"  # gold document cited, pages unknown
    rows = [
        s | {"score": 1.0},
        score_prediction(TEXT_Q, cited) | {"score": 1.0},
        missing_row({"id": "m", "page_evidence": False, "has_evidence": False}),
    ]
    summary = summarize(rows, n_boot=50)
    assert summary["page_f1"]["n"] == 1 and summary["page_f1"]["value"] == 1.0
    assert summary["doc_f1"]["n"] == 2
    assert summary["doc_f1"]["value"] == pytest.approx((2 / 3 + 1.0) / 2)


def _row(score, steps, tokens, status="ok"):
    return {
        "score": score,
        "correct": score >= 0.5,
        "steps": steps,
        "input_tokens": tokens,
        "output_tokens": 10,
        "status": status,
    }


def test_summary_counts_missing_as_wrong_and_corrects_judged_accuracy():
    rows = [_row(1.0, 2, 100), _row(0.5, 3, 200), _row(0.0, 5, 300)]
    rows.append(missing_row({"id": "gone"}))
    s = summarize(rows, judged=True, sensitivity=0.9, specificity=0.95, n_boot=100)
    assert s["n"] == 4 and s["status"] == {"ok": 3, "failed": 0, "missing": 1}
    assert s["accuracy"]["value"] == pytest.approx(1.5 / 4)
    assert s["accuracy_corrected"]["value"] == pytest.approx((0.375 + 0.95 - 1) / 0.85)
    assert s["total_tokens"]["value"] == pytest.approx((110 + 210 + 310 + 0) / 4)
    assert s["accuracy"]["low"] <= s["accuracy"]["value"] <= s["accuracy"]["high"]
    assert effort_value(rows[0], "total_tokens") == 110.0
    # correct = score >= 0.5: sorted by steps 0(miss),2,3,5 -> 0,1,1,0; mean .5 -> K = 1
    assert s["kuiper_steps"]["value"] == pytest.approx(1.0)


def test_rescoring_an_old_row_keeps_its_judge_verdict_unless_a_new_stage_decides():
    from rlm_docs.eval.scoring import rescore

    judged = {
        "id": "t",
        "answer": ["Consumer segment"],
        "citations": [],
        "answer_variants": [["Consumer Health"]],
        "evidence": [],
        "stage": "judge",
        "judgment": "partial",
        "score": 0.5,
    }
    again = rescore(judged)
    assert (again["stage"], again["score"], again["judgment"]) == ("judge", 0.5, "partial")
    assert again["page_f1"] is None
    wrong_number = judged | {"answer": ["$1.33"], "answer_variants": [["$2.35"]], "score": 1.0}
    assert (rescore(wrong_number)["stage"], rescore(wrong_number)["score"]) == ("numeric", 0.0)
    assert rescore({"id": "m", "status": "missing", "score": 0.0}) == {
        "id": "m",
        "status": "missing",
        "score": 0.0,
    }
