"""Scoring one prediction: the accuracy stages, citation F1 and the error type.

Only the answer's `values` are scored by the string and numeric stages; the judge reads the
values and the explanation; the caveat is never scored (`rlm_docs.answer_record`). Stages, in
order (the first that decides wins; `stage` in the row says which):
1. `unanswerable`: when the gold says "Not answerable", a refusal (values that only decline,
   what MADQA's taxonomy calls `refusal`, see `taxonomy.is_refusal`; a caveat saying why is
   fine) scores 1 and any answer 0. A run that failed with an empty answer is not a refusal.
2. `empty`: no values score 0.
3. A question with a `scorer` field (the generated workloads) is scored by that workload's own
   metric (`rlm_docs.eval.workload_scoring`; stage = the scorer's name), never by the judge and
   without the length cap (pair lists are long); the scorer also says what `correct` means.
4. `too_long`: more than MAX_ANSWER_CHARS of values scores 0.
5. `numeric`: when a gold variant is a bare quantity, `numeric.numeric_verdict` decides (scale
   words, units, 1% or the gold's rounding; hedges); a wrong number scores 0 whatever ANLS* says.
6. `exact`: ANLS* = 1 scores 1.
7. `judge` (MADQA's LLM judge, 1 / 0.5 / 0) when one is given;
8. else `needs_judge` when the gold is prose (`prose_gold.is_prose_gold`): score None (n/a),
   `correct` None; such rows are left out of the headline accuracy and counted apart;
9. else `anls`: ANLS* >= 0.5.
ANLS* is computed for every answer and kept as its own column. A prediction is `correct` when
its score is at least 0.5, as in MADQA's harness (workload scorers say otherwise: see 3); that
flag drives Kuiper and the error taxonomy.

Citation F1 is `None` (n/a, left out of means) where the gold cannot score it: Page F1 when a
question has no evidence or document-level evidence (`page: null`), Doc F1 when it has none.
"""

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rlm_docs.answer_record import stored_answer
from rlm_docs.eval.anls import anls_star
from rlm_docs.eval.citation_f1 import doc_f1, page_f1
from rlm_docs.eval.judge import Verdict
from rlm_docs.eval.numeric import numeric_verdict
from rlm_docs.eval.prose_gold import is_prose_gold
from rlm_docs.eval.taxonomy import error_type, is_refusal
from rlm_docs.eval.workload_scoring import score_workload
from rlm_docs.questions import Question

MAX_ANSWER_CHARS = 2000
# Recorded in each run's manifest. 1: ANLS* and judge only; 2: numeric stage, unanswerable
# gold, n/a citation F1; 3: the answer record (values only scored, caveats apart), hedges,
# `needs_judge`, exact workload counts. Rows of older runs are scored again on reading.
SCORING_VERSION = 3
# judge(question, values, explanation) -> verdict
JudgeFn = Callable[[Question, list[str], str], Verdict]


def _decided(anls: float, score: float | None, stage: str) -> dict[str, Any]:
    return {"anls": anls, "score": score, "stage": stage, "judgment": None}


def answer_score(
    question: Question,
    values: Sequence[str],
    judge: JudgeFn | None = None,
    *,
    failed: bool = False,
    explanation: str = "",
) -> dict[str, Any]:
    """`{anls, score, stage, judgment}` of an answer's values (and explanation, for the judge)
    by the stages of the module docstring; `score` is None for `needs_judge`."""
    items = [str(a) for a in values if str(a).strip()]
    if question.unanswerable and not failed and is_refusal(items):
        return _decided(anls_star(items, question.answer_variants), 1.0, "unanswerable")
    if not items:
        return _decided(0.0, 0.0, "empty")
    scorer = question.extra.get("scorer")
    if scorer:  # a generated workload's own metric (rlm_docs.eval.workload_scoring)
        return score_workload(scorer, question.extra, question.answer_variants, items)
    if len(json.dumps(items, ensure_ascii=False)) > MAX_ANSWER_CHARS:
        return _decided(0.0, 0.0, "too_long")
    anls = anls_star(items, question.answer_variants)
    if question.unanswerable:
        return _decided(anls, 0.0, "unanswerable")
    numeric = numeric_verdict(items, question.answer_variants)
    if numeric is not None:
        return _decided(anls, float(numeric), "numeric")
    if anls >= 1.0:
        return _decided(anls, 1.0, "exact")
    if judge is None and is_prose_gold(question.answer_variants):
        return _decided(anls, None, "needs_judge")
    if judge is None:
        return _decided(anls, float(anls >= 0.5), "anls")
    verdict = judge(question, items, explanation)
    return {
        "anls": anls,
        "score": verdict.score,
        "stage": "judge",
        "judgment": verdict.judgment,
        "judge_issue": verdict.main_issue,
        "judge_explanation": verdict.explanation,
    }


def score_prediction(
    question: Question, record: Mapping[str, Any], judge: JudgeFn | None = None
) -> dict[str, Any]:
    """All per-question metrics of a prediction record (its answer record, citations); a
    record without a `caveat` field is an old one (`answer_record.stored_answer`)."""
    values, explanation, _ = stored_answer(dict(record))
    citations = record.get("citations") or []
    failed = record.get("stop_reason") == "error" or bool(record.get("error"))
    scored = answer_score(question, values, judge, failed=failed, explanation=explanation)
    correct = scored.pop("correct", None)
    if correct is None and scored["score"] is not None:
        correct = scored["score"] >= 0.5
    evidence = question.evidence
    return scored | {
        "correct": correct,
        "page_f1": page_f1(citations, evidence) if question.page_evidence else None,
        "doc_f1": doc_f1(citations, evidence) if evidence else None,
        "error_type": None if correct is None else error_type(values, citations, evidence, correct),
    }


def stored_judge(row: Mapping[str, Any]) -> JudgeFn | None:
    """The verdict an earlier judge stored in `row`, as a judge function (None if none)."""
    if row.get("stage") != "judge":
        return None
    stored = Verdict(
        str(row.get("judgment") or "error"),
        float(row.get("score") or 0),
        str(row.get("judge_issue") or ""),
        str(row.get("judge_explanation") or ""),
    )

    def judge(_question: Question, _values: list[str], _explanation: str) -> Verdict:
        return stored

    return judge


def rescore(row: Mapping[str, Any], judge: JudgeFn | None = None) -> dict[str, Any]:
    """A stored row scored again from its stored answer, gold and evidence, its answer record
    read by the old-record rule (`answer_record.stored_answer`). Without `judge`, the judge is
    not called again: a stored verdict stands where the stages leave the answer to it. Rows
    without a stored gold (missing questions) are kept."""
    if "answer_variants" not in row or row.get("status") == "missing":
        return dict(row)
    values, explanation, caveat = stored_answer(dict(row))
    new = dict(row) | {"answer": values, "explanation": explanation, "caveat": caveat}
    return new | score_prediction(row_question(new), new, judge or stored_judge(row))


def row_question(row: Mapping[str, Any]) -> Question:
    """The question a scored row stores (id, text, gold, evidence, workload fields)."""
    fields = row.get("fields") or {}
    return Question(
        id=str(row["id"]),
        question=str(row.get("question") or ""),
        answer_variants=row["answer_variants"],
        evidence=row.get("evidence") or [],
        question_type=str(row.get("question_type") or ""),
        domain=str(row.get("domain") or ""),
        extra={k: v for k, v in fields.items() if k not in ("question_type", "domain", "hop_type")},
    )
