"""A benchmark question: what every system answers and every evaluation scores.

It lives below both `systems` (which answer questions) and `eval` (which loads and scores
them) so that neither has to import the other for the type; loading and validating question
files stays in `rlm_docs.eval.dataset`. `doc_key` is here because a question's evidence and a
prediction's citations name documents the same loose way, and both are compared by it.
"""

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

HOP_TYPES = ("single", "cross_page", "cross_doc", "none")
_UNANSWERABLE = re.compile(
    r"(?:not answerable|unanswerable|cannot be answered|no answer)\W*", re.IGNORECASE
)


@dataclass(frozen=True)
class Question:
    """One benchmark item; `evidence` pages are integers, documents as written in the file."""

    id: str
    question: str
    answer_variants: list[list[str]]
    evidence: list[dict[str, Any]] = field(default_factory=list)
    question_type: str = ""
    domain: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def hop_type(self) -> str:
        """`single` page, `cross_page` (several pages, one document), `cross_doc`, or `none`
        (no evidence). With `hops`, 1 is single even when several alternative pages are listed;
        otherwise the distinct evidence pages decide."""
        docs = {doc_key(e["document"]) for e in self.evidence}
        hops = self.extra.get("hops")
        if hops is not None:
            if hops <= 1:
                return "single"
            return "cross_doc" if len(docs) > 1 else "cross_page"
        if not docs:
            return "none"
        if len(docs) > 1:
            return "cross_doc"
        pages = {(doc_key(e["document"]), e["page"]) for e in self.evidence if e["page"]}
        return "cross_page" if len(pages) > 1 else "single"

    @property
    def page_evidence(self) -> bool:
        """True when every evidence item names a page, so Page F1 is defined."""
        return bool(self.evidence) and all(e["page"] is not None for e in self.evidence)

    @property
    def unanswerable(self) -> bool:
        """Every gold variant is a single "Not answerable" (MMLongBench-Doc's convention)."""
        return all(
            len(v) == 1 and _UNANSWERABLE.fullmatch(v[0].strip()) for v in self.answer_variants
        )


def doc_key(name: Any) -> str:
    """Canonical document key: the file stem, lower-cased (`dir/Report.PDF` -> `report`).

    Only a short alphabetic extension is dropped, so `FY2.5_report` keeps its dot.
    """
    path = PurePosixPath(str(name).strip().replace("\\", "/"))
    suffix = path.suffix[1:]
    stem = path.stem if suffix.isalpha() and len(suffix) <= 5 else path.name
    return stem.lower()
