"""Scoring one prediction: the accuracy stages, citation F1 and the error type.

Accuracy follows MADQA's ANLS*+LLM pipeline: an empty or over-long answer scores 0 outright; an
exact match (ANLS* = 1) scores 1; anything else goes to the judge (1 / 0.5 / 0). Without a
judge the score is the ANLS* >= 0.5 stage (1 or 0). A question with a `scorer` field (the
generated workloads) is scored by that workload's own metric instead, never by the judge. A prediction is `correct` when its score is
at least 0.5, as in MADQA's harness; that flag drives Kuiper and the error taxonomy.
"""

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rlm_docs.eval.anls import anls_star
from rlm_docs.eval.citations import doc_f1, page_f1
from rlm_docs.eval.dataset import Question
from rlm_docs.eval.judge import Verdict
from rlm_docs.eval.taxonomy import error_type
from rlm_docs.eval.workload_scoring import score_workload

MAX_ANSWER_CHARS = 2000
JudgeFn = Callable[[Question, list[str]], Verdict]


def answer_score(
    question: Question, answer: Sequence[str], judge: JudgeFn | None = None
) -> dict[str, Any]:
    """`{anls, score, stage, judgment}`; stage is empty / too_long / exact / judge / anls."""
    items = [str(a) for a in answer if str(a).strip()]
    if not items:
        return {"anls": 0.0, "score": 0.0, "stage": "empty", "judgment": None}
    scorer = question.extra.get("scorer")
    if scorer:  # a generated workload's own metric (rlm_docs.eval.workload_scoring)
        return score_workload(scorer, question.extra, question.answer_variants, items)
    if len(json.dumps(items, ensure_ascii=False)) > MAX_ANSWER_CHARS:
        return {"anls": 0.0, "score": 0.0, "stage": "too_long", "judgment": None}
    anls = anls_star(items, question.answer_variants)
    if anls >= 1.0:
        return {"anls": anls, "score": 1.0, "stage": "exact", "judgment": None}
    if judge is None:
        return {"anls": anls, "score": float(anls >= 0.5), "stage": "anls", "judgment": None}
    verdict = judge(question, items)
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
    """All per-question metrics of a MADQA prediction record (answer, citations)."""
    answer = record.get("answer") or []
    if isinstance(answer, str):
        answer = [answer]
    citations = record.get("citations") or []
    scored = answer_score(question, answer, judge)
    correct = scored["score"] >= 0.5
    return scored | {
        "correct": correct,
        "page_f1": page_f1(citations, question.evidence),
        "doc_f1": doc_f1(citations, question.evidence),
        "error_type": error_type(answer, citations, question.evidence, correct),
    }
