"""Scoring one prediction: the accuracy stages, citation F1 and the error type.

Accuracy stages, in order (the first that decides wins; `stage` in the row says which):
1. `unanswerable`: when the gold says "Not answerable", a refusal (what MADQA's taxonomy calls
   `refusal`, see `taxonomy.is_refusal`, no answer included) scores 1 and any answer 0. A run
   that failed with an empty answer is not a refusal.
2. `empty`: no answer scores 0.
3. A question with a `scorer` field (the generated workloads) is scored by that workload's own
   metric (`rlm_docs.eval.workload_scoring`; stage = the scorer's name), never by the judge and
   without the length cap (pair lists are long).
4. `too_long`: more than MAX_ANSWER_CHARS of answer scores 0.
5. `numeric`: when a gold variant is a bare quantity, `numeric.numeric_verdict` decides (scale
   words, units, 1% or the gold's rounding); a wrong number scores 0 whatever ANLS* says.
6. `exact`: ANLS* = 1 scores 1.
7. `judge` (MADQA's LLM judge, 1 / 0.5 / 0) when one is given, else `anls`: ANLS* >= 0.5.
ANLS* is computed for every answer and kept as its own column. A prediction is `correct` when
its score is at least 0.5, as in MADQA's harness; that flag drives Kuiper and the error taxonomy.

Citation F1 is `None` (n/a, left out of means) where the gold cannot score it: Page F1 when a
question has no evidence or document-level evidence (`page: null`), Doc F1 when it has none.
"""

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rlm_docs.eval.anls import anls_star
from rlm_docs.eval.citation_f1 import doc_f1, page_f1
from rlm_docs.eval.judge import Verdict
from rlm_docs.eval.numeric import numeric_verdict
from rlm_docs.eval.taxonomy import error_type, is_refusal
from rlm_docs.eval.workload_scoring import score_workload
from rlm_docs.questions import Question

MAX_ANSWER_CHARS = 2000
# Recorded in each run's manifest. 1: ANLS* and judge only; 2: the stages above (numeric stage,
# unanswerable gold, n/a citation F1). Rows of older runs are scored again on reading.
SCORING_VERSION = 2
JudgeFn = Callable[[Question, list[str]], Verdict]


def _decided(anls: float, score: float, stage: str) -> dict[str, Any]:
    return {"anls": anls, "score": score, "stage": stage, "judgment": None}


def answer_score(
    question: Question,
    answer: Sequence[str],
    judge: JudgeFn | None = None,
    *,
    failed: bool = False,
) -> dict[str, Any]:
    """`{anls, score, stage, judgment}` by the stages of the module docstring."""
    items = [str(a) for a in answer if str(a).strip()]
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
    if judge is None:
        return _decided(anls, float(anls >= 0.5), "anls")
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
    failed = record.get("stop_reason") == "error" or bool(record.get("error"))
    scored = answer_score(question, answer, judge, failed=failed)
    correct = scored["score"] >= 0.5
    evidence = question.evidence
    return scored | {
        "correct": correct,
        "page_f1": page_f1(citations, evidence) if question.page_evidence else None,
        "doc_f1": doc_f1(citations, evidence) if evidence else None,
        "error_type": error_type(answer, citations, evidence, correct),
    }


def rescore(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row scored by an older SCORING_VERSION, scored again from its stored answer, gold and
    evidence. The judge is not called again: its stored verdict stands where the new stages
    leave the answer to it. Rows without a stored gold (missing questions) are kept."""
    if "answer_variants" not in row or row.get("status") == "missing":
        return dict(row)
    question = Question(
        id=str(row["id"]),
        question=str(row.get("question") or ""),
        answer_variants=row["answer_variants"],
        evidence=row.get("evidence") or [],
    )
    judge = None
    if row.get("stage") == "judge":
        stored = Verdict(
            str(row.get("judgment") or "error"),
            float(row.get("score") or 0),
            str(row.get("judge_issue") or ""),
            str(row.get("judge_explanation") or ""),
        )

        def judge(_question: Question, _items: list[str]) -> Verdict:
            return stored

    return dict(row) | score_prediction(question, row, judge)
