"""Metadata hidden in document names, used to boost search toward the right filing.

Collections of filings name files like `3M_2018_10K`, `AMERICANEXPRESS_2022Q4_EARNINGS` or
`AMCOR_2022_8K_dated-2022-04-26`: `_`-separated company words, then a year (optionally with a
quarter), then the document type. A question such as "What was 3M's FY2018 capex?" names the
company and the fiscal year, and plain BM25 cannot tell the 2018 filing from the seven
near-identical other years, so `name_match` scores how well a query matches a document name.
"""

import re
from dataclasses import dataclass

_YEAR_PART = re.compile(r"^((?:19|20)\d\d)(q[1-4])?$")
_WORD = re.compile(r"[a-z0-9]+")
_QUERY_YEAR = re.compile(r"\b(?:fy|fiscal\s+(?:year\s+)?)?\s*'?((?:19|20)\d\d)\b|\bfy\s*'?(\d\d)\b")
_KINDS = {
    "10k": ("10k", "annual"),
    "annualreport": ("10k", "annual"),
    "10q": ("10q", "quarter", "quarterly"),
    "8k": ("8k",),
    "earnings": ("earnings",),
}


@dataclass(frozen=True, slots=True)
class NameInfo:
    """What a document name says: company key (lowercase letters/digits), year, kind."""

    company: str
    year: int | None
    kind: str | None


def parse_name(name: str) -> NameInfo:
    """Split `COMPANY_WORDS_YEAR[Qn]_KIND[_...]`; a name without a year is all company."""
    parts = [p.lower() for p in re.split(r"[_\s]+", name) if p]
    for i, part in enumerate(parts):
        m = _YEAR_PART.match(part)
        if m and i > 0:
            kind = parts[i + 1].replace("-", "") if i + 1 < len(parts) else None
            return NameInfo("".join(_WORD.findall("".join(parts[:i]))), int(m.group(1)), kind)
    return NameInfo("".join(_WORD.findall(name.lower())), None, None)


@dataclass(frozen=True, slots=True)
class QueryInfo:
    """What a query mentions: joined word n-grams (to find company keys) and years."""

    grams: frozenset[str]
    words: tuple[str, ...]
    years: frozenset[int]
    compact: str


def parse_query(query: str) -> QueryInfo:
    q = query.lower().replace("&", " ")
    words = tuple(_WORD.findall(q.replace("'s", "")))
    grams = {w for w in words}
    for n in (2, 3, 4):
        grams.update("".join(words[i : i + n]) for i in range(len(words) - n + 1))
    years: set[int] = set()
    for four, two in _QUERY_YEAR.findall(q):
        years.add(int(four) if four else 2000 + int(two))
    return QueryInfo(frozenset(grams), words, frozenset(years), "".join(words))


def company_match(info: NameInfo, query: QueryInfo) -> float:
    """1 if the query names the company (`american express` ~ `AMERICANEXPRESS`), 0.5 if a
    query word of 4+ letters is a prefix of the company key (`cvs` ~ `CVSHEALTH`), else 0."""
    if not info.company:
        return 0.0
    if info.company in query.grams:
        return 1.0
    for w in query.words:
        if len(w) >= 4 and not w.isdigit() and info.company.startswith(w):
            return 0.5
    return 0.0


def name_match(info: NameInfo, query: QueryInfo) -> float:
    """Score in [0, 1]: company named (0.6), plus its fiscal year (0.3), plus its kind (0.1).
    Year and kind count only when the company matches, so they never pull in other firms."""
    c = company_match(info, query)
    if not c:
        return 0.0
    score = 0.6 * c
    if info.year is not None and info.year in query.years:
        score += 0.3
    if info.kind and any(k in query.compact for k in _KINDS.get(info.kind, (info.kind,))):
        score += 0.1
    return score
