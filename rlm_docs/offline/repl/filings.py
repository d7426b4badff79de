"""Step 1 of the corpus policy: the filings the question is about (sandbox code).

What each document is comes from the corpus's own name parsing, `rlm_docs.corpus.filings`
(which the sandbox allows to be imported): company keys, year, quarter and kind from the name
and the metadata `files()` shows, and how strongly the question names the company. Of the
documents whose company the question names best, the policy prefers the kind of filing asked
for (the annual report unless a quarter, an 8-K or an earnings release is named), the quarter
named, the latest year named (else the nearest earlier one; the newest filing when none is
named), then the votes of a corpus-wide search.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from rlm_docs.corpus.filings import company_match, describe, parse_query


def wanted_kinds(question: str, quarter: str) -> set[str]:
    """The filing kinds (`rlm_docs.corpus.filings` names) the question asks for."""
    low = question.lower()
    if re.search(r"\b8-?k\b", low):
        return {"8k"}
    if quarter:
        return {"10q", "earnings"}
    if re.search(r"\bearnings (?:release|report|call)|press release", low):
        return {"earnings"}
    return {"10k"}


def year_fit(year: int | None, target: int | None) -> float:
    """Closeness of a filing's year to the latest year named; a later year costs a little more
    than an earlier one (a report covers the years before it)."""
    if year is None:
        return -100.0
    if target is None:
        return year / 10000
    return -abs(year - target) - (0.5 if year > target else 0.0)


def metadata(row: dict) -> dict:
    """The metadata fields of a `files()` row, as `describe` reads them."""
    fields = {"company": "company", "doc_type": "kind", "period": "period"}
    return {key: row[field] for key, field in fields.items() if row.get(field)}


def likely_filings(plan: dict, search: Callable, files: Callable) -> list[str]:
    """The (at most) two likeliest filings, best first."""
    question = plan["question"]
    kinds = wanted_kinds(question, plan["quarter"])
    target = max(int(y) for y in plan["years"]) if plan["years"] else None
    votes: dict = {}
    for rank, h in enumerate(search(question, k=20)):
        votes[h["file"]] = votes.get(h["file"], 0.0) + 1 / (1 + rank)
    facts = parse_query(question)
    filings = {row["name"]: describe(row["name"], metadata(row)) for row in files()}
    named = {name: company_match(f, facts) for name, f in filings.items()}
    best = max(named.values(), default=0)
    owned = [name for name, score in named.items() if best and score == best]

    def doc_key(name: str) -> tuple:
        f = filings[name]
        quarter = f.quarter == int(plan["quarter"]) if plan["quarter"] else True
        return (f.kind in kinds, quarter, year_fit(f.year, target), votes.get(name, 0.0))

    likely = sorted(owned, key=doc_key, reverse=True)[:2]
    print("likely filings:", likely)
    return likely
