import pytest

from rlm_docs.eval.aggregate import effort_value, summarize
from rlm_docs.eval.dataset import Question
from rlm_docs.eval.judge import Verdict
from rlm_docs.eval.rundir import missing_row
from rlm_docs.eval.scoring import score_prediction

Q = Question(
    id="q",
    question="What was revenue?",
    answer_variants=[["$4.2 billion"]],
    evidence=[{"document": "acme", "page": 2}],
)


def _judge(calls):
    def judge(question, items):
        calls.append(items)
        return Verdict("partial", 0.5, "verbosity_medium", "")

    return judge


@pytest.mark.parametrize(
    ("answer", "stage", "score"),
    [
        ([], "empty", 0.0),
        (["x" * 2100], "too_long", 0.0),
        (["$4.2 Billion"], "exact", 1.0),
        (["$4.2 bn"], "judge", 0.5),
    ],
)
def test_accuracy_stages_with_a_judge(answer, stage, score):
    calls = []
    s = score_prediction(Q, {"answer": answer, "citations": []}, _judge(calls))
    assert (s["stage"], s["score"]) == (stage, score)
    assert len(calls) == (stage == "judge")


def test_without_judge_the_anls_stage_decides():
    # "$4.2 billions" vs "$4.2 billion": 1 edit over 13 chars -> ANLS* 0.923 -> correct
    s = score_prediction(Q, {"answer": "$4.2 billions", "citations": [{"file": "ACME", "page": 2}]})
    assert s["stage"] == "anls" and s["score"] == 1.0 and s["anls"] == pytest.approx(12 / 13)
    assert s["page_f1"] == 1.0 and s["error_type"] is None
    wrong = score_prediction(Q, {"answer": ["$9"], "citations": [{"file": "acme", "page": 7}]})
    assert wrong["correct"] is False and wrong["error_type"] == "navigation"


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
