"""MADQA's error taxonomy (App. H.3) for wrong answers, decided from citations alone.

- `refusal`: no answer, or an answer that declines ("not found", "cannot determine").
- `retrieval`: no gold document was cited — the evidence was never found.
- `navigation`: a gold document was cited but no gold page — right file, wrong place.
- `comprehension`: a gold page was cited yet the answer is wrong — found but misread.

Where the gold cannot tell these apart the error is `comprehension`: a question with no evidence
(an unanswerable one that was answered) and, with document-level evidence (`page: null`), a
wrong answer that cited a gold document. `unchecked_comprehension` tells those rows apart, so a
report can say how many of its comprehension errors had no gold page to check.
"""

import re
from collections.abc import Mapping, Sequence
from typing import Any

from rlm_docs.eval.citation_f1 import doc_set, page_set

ERROR_TYPES = ("refusal", "retrieval", "navigation", "comprehension")
_REFUSAL = re.compile(
    r"\b(cannot|can ?not|unable to|unanswerable|not (?:answerable|found|available|provided|specified"
    r"|mentioned|disclosed|determinable|possible)|no (?:answer|information|data|relevant)|insufficient|unknown|i don'?t know|"
    r"n/?a)\b",
    re.IGNORECASE,
)


def is_refusal(answer: Sequence[str]) -> bool:
    """True for an empty answer or one that only declines to answer."""
    text = " ".join(a for a in answer if a).strip()
    return not text or (len(text) < 200 and bool(_REFUSAL.search(text)))


def error_type(
    answer: Sequence[str],
    citations: Sequence[Mapping[str, Any]],
    evidence: Sequence[Mapping[str, Any]],
    correct: bool,
) -> str | None:
    """None for a correct answer, else one of ERROR_TYPES."""
    if correct:
        return None
    if is_refusal(answer):
        return "refusal"
    if not evidence:
        return "comprehension"
    if not doc_set(citations) & doc_set(evidence):
        return "retrieval"
    gold_pages = page_set(evidence)
    if gold_pages and not page_set(citations) & gold_pages:
        return "navigation"
    return "comprehension"


def unchecked_comprehension(row: Mapping[str, Any]) -> bool:
    """True for a scored row counted `comprehension` although its question has no page evidence
    (none, as in the generated workloads, or document-level `page: null` only)."""
    return row.get("error_type") == "comprehension" and not page_set(row.get("evidence") or [])
