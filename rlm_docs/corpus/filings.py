"""Which document a query is about: company, period and kind, from names, metadata and query.

Collections of filings hold many near-identical documents of one company (one per year or
quarter), and plain BM25 cannot tell `3M_2018_10K` from `3M_2017_10K`. Questions name what
they want ("3M's FY2018 capex", "NVIDIA's Q2 2023 10-Q", "AMCOR's 8-K dated 1st July 2022"),
so `Filing` says what a document is and `QueryFacts` what a query asks for; `filing_match`
scores the fit in [0, 1].

A `Filing` comes from the document name (`COMPANY_YEAR[Qn]_KIND[_dated-DATE]`, or
`YEAR Qn TICKER`) and, when given at ingest, its metadata row (`company`, `ticker`,
`doc_type`, `doc_period`/`period`), which wins. Company keys are the name with spaces and
punctuation squashed out, with and without corporate suffixes ("Amazon.com, Inc." → `amazon`),
the ticker, and two common short forms of multi-word names: initials joined by "n" for
"X & Y" (`jnj`; also for a two-word company in a name, `JOHNSON_JOHNSON_2022_10K`, where the "&"
is lost) and the first two letters of each word (`amex`). A query names a company when
one of its word n-grams, squashed the same way, equals a key; a capitalised query word equal to
the first word of a company name ("MGM" for MGM Resorts) is a weaker match (0.5).

Years: the largest year a query names is the one it is about ("FY2019 - FY2021 average" needs
the FY2021 filing); other named years count half. A quarter ("Q2 2023", "Q2 of FY2024",
"second fiscal quarter of 2023") asks for that quarter's filing; a year without a quarter asks
for the annual report first. "Latest" / "most recent" without a year asks for the newest filing.
"""

import datetime as dt
import re
from dataclasses import dataclass

_WORD = re.compile(r"[a-z0-9]+")
_YEAR = re.compile(r"^((?:19|20)\d\d)(?:q([1-4]))?$")
_QUARTER = re.compile(r"^q([1-4])$")
_DATE = re.compile(r"((?:19|20)\d\d)-(\d\d)-(\d\d)")
_SUFFIXES = frozenset(
    [
        "inc",
        "incorporated",
        "corporation",
        "corp",
        "company",
        "co",
        "ltd",
        "plc",
        "llc",
        "the",
        "holdings",
        "group",
        "com",
        "sa",
        "ag",
        "nv",
    ]
)
_KIND_WORDS = {
    "10k": "10k",
    "annualreport": "10k",
    "10q": "10q",
    "8k": "8k",
    "earnings": "earnings",
}
_QUERY_KINDS = (
    ("10k", re.compile(r"\b10-?k\b|\bannual report\b")),
    ("10q", re.compile(r"\b10-?q\b|\bquarterly report\b")),
    ("8k", re.compile(r"\b8-?k\b")),
    ("earnings", re.compile(r"\bearnings (?:release|report|call)\b|\bpress release\b")),
)
_ORDINAL = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "1st": 1,
    "2nd": 2,
    "3rd": 3,
    "4th": 4,
}
_Q_YEAR = re.compile(
    r"\bq([1-4])\s*(?:'|of\s+)?(?:fy|fiscal(?:\s+year)?)?\s*'?((?:19|20)\d\d|\d\d)\b"
    r"|\b((?:19|20)\d\d)\s*q([1-4])\b"
    r"|\b(first|second|third|fourth|1st|2nd|3rd|4th)\s+(?:fiscal\s+)?quarter\s+(?:of\s+)?"
    r"(?:fiscal\s+(?:year\s+)?|fy\s*)?'?((?:19|20)\d\d)\b"
)
_Q_ONLY = re.compile(r"\bq[1-4]\b|\b(?:first|second|third|fourth)\s+(?:fiscal\s+)?quarter\b")
_HALF = re.compile(
    r"\b(?:h([12])|(first|second)\s+half(?:\s+of)?)\s*(?:fy|fiscal(?:\s+year)?)?\s*'?((?:19|20)\d\d)\b"
)
_YEARS = re.compile(r"\b(?:fy|fiscal\s+(?:year\s+)?)?\s*'?((?:19|20)\d\d)\b|\bfy\s*'?(\d\d)\b")
_MONTHS = {
    m: i
    for i, names in enumerate(
        (
            "jan january",
            "feb february",
            "mar march",
            "apr april",
            "may",
            "jun june",
            "jul july",
            "aug august",
            "sep sept september",
            "oct october",
            "nov november",
            "dec december",
        ),
        1,
    )
    for m in names.split()
}
_MONTH = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_QUERY_DATE = re.compile(
    rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+((?:19|20)\d\d)\b"
    rf"|\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}\s+((?:19|20)\d\d)\b"
    r"|\b((?:19|20)\d\d)-(\d\d)-(\d\d)\b"
)
_LATEST = re.compile(r"\b(?:latest|most recent|current|newest)\b")
DATE_DAYS = 10  # a dated filing matches a date this close (8-Ks are filed days after events)


@dataclass(frozen=True, slots=True)
class Filing:
    """What one document is: company keys (strong and first-word), period, kind, date."""

    companies: frozenset[str]
    short: frozenset[str]
    year: int | None
    quarter: int | None
    kind: str | None
    date: dt.date | None


def _squash(text: str) -> str:
    return "".join(_WORD.findall(text.lower().replace("'s", "")))


def _company_keys(company: str) -> tuple[set[str], set[str]]:
    """Strong keys and first-word keys of a company name."""
    words = _WORD.findall(company.lower().replace("'s", ""))
    core = [w for w in words if w not in _SUFFIXES] or words
    keys = {k for k in ("".join(words), "".join(core)) if len(k) >= 2}
    if len(core) >= 2:
        if re.search(r"&|\band\b", company.lower()) and len(core) == 2 or "and" in core:
            parts = [w for w in core if w != "and"]
            keys.add("n".join(w[0] for w in parts))
        if all(len(w) >= 2 for w in core):
            keys.add("".join(w[:2] for w in core))
    short = {core[0]} if len(core) >= 2 and len(core[0]) >= 3 and not core[0].isdigit() else set()
    return keys, short - keys


def _date(y: str, m: str | int, d: str) -> dt.date | None:
    try:
        return dt.date(
            int(y), _MONTHS[m] if isinstance(m, str) and not m.isdigit() else int(m), int(d)
        )
    except (ValueError, KeyError):
        return None


def describe(name: str, meta: dict[str, object] | None = None) -> Filing:
    """A document's `Filing` from its name, overridden by its metadata row where that says."""
    meta = meta or {}
    parts = [p for p in re.split(r"[_\s]+", name.lower()) if p]
    year = quarter = kind = None
    company_parts: list[str] = []
    for i, part in enumerate(parts):
        m = _YEAR.match(part)
        if not m:
            continue
        year, quarter = int(m.group(1)), int(m.group(2)) if m.group(2) else None
        rest = parts[i + 1 :]
        if rest and quarter is None and _QUARTER.match(rest[0]):
            quarter, rest = int(rest[0][1]), rest[1:]
        if rest:
            kind = _KIND_WORDS.get(rest[0].replace("-", ""))
            kind = kind or _KIND_WORDS.get(rest[0].split("-")[0])
        company_parts = parts[:i] if i else [p for p in rest if _KIND_WORDS.get(p) is None][:1]
        break
    else:
        company_parts = parts if not meta else []
    date_m = _DATE.search(name)
    date = _date(*date_m.groups()) if date_m else None
    keys: set[str] = set()
    short: set[str] = set()
    if company_parts:
        keys.add("".join(_WORD.findall("".join(company_parts))))
        if len(company_parts) == 2 and all(p[:1].isalpha() for p in company_parts):
            keys.add("n".join(p[0] for p in company_parts))  # JOHNSON_JOHNSON: "JnJ"
    company = meta.get("company")
    if isinstance(company, str) and company.strip():
        k, s = _company_keys(company)
        keys |= k
        short |= s
    ticker = meta.get("ticker")
    if isinstance(ticker, str) and ticker.strip():
        keys.add(_squash(ticker))
    period = meta.get("period", meta.get("doc_period"))
    if isinstance(period, int) and not isinstance(period, bool):
        year = period
    elif isinstance(period, str):
        pm = re.match(r"\s*((?:19|20)\d\d)\s*(?:q([1-4]))?", period.lower())
        if pm:
            year = int(pm.group(1))
            quarter = int(pm.group(2)) if pm.group(2) else quarter
    doc_type = meta.get("doc_type")
    if isinstance(doc_type, str) and doc_type.strip():
        squashed = _squash(doc_type)
        kind = next((v for k, v in _KIND_WORDS.items() if squashed.startswith(k)), kind)
    keys.discard("")
    return Filing(frozenset(keys), frozenset(short - keys), year, quarter, kind, date)


@dataclass(frozen=True, slots=True)
class QueryFacts:
    """What a query mentions: squashed word n-grams, capitalised words, years (the last named
    is `year`), (year, quarter) pairs, whether it asks about a quarter, kinds, dates, latest."""

    grams: frozenset[str]
    capitals: frozenset[str]
    years: frozenset[int]
    year: int | None
    quarters: frozenset[tuple[int, int]]
    quarterly: bool
    kinds: frozenset[str]
    dates: tuple[dt.date, ...]
    latest: bool


def _full_year(text: str) -> int:
    return int(text) if len(text) == 4 else 2000 + int(text)


def parse_query(query: str) -> QueryFacts:
    low = query.lower()
    words = _WORD.findall(low.replace("'s", "").replace("’s", ""))
    grams = set(words)
    for n in (2, 3, 4):
        grams.update(map("".join, zip(*[words[i:] for i in range(n)], strict=False)))
    capitals = {w.lower() for w in re.findall(r"\b[A-Z][A-Za-z0-9]+\b", query)}
    years = {_full_year(a or b) for a, b in _YEARS.findall(low)}
    quarters = set()
    for m in _Q_YEAR.finditer(low):
        if m.group(1):
            quarters.add((_full_year(m.group(2)), int(m.group(1))))
        elif m.group(3):
            quarters.add((int(m.group(3)), int(m.group(4))))
        else:
            quarters.add((int(m.group(6)), _ORDINAL[m.group(5)]))
    for m in _HALF.finditer(low):
        half = int(m.group(1)) if m.group(1) else 1 if m.group(2) == "first" else 2
        quarters.add((int(m.group(3)), 2 * half))  # a half-year is reported with Q2 / Q4
    years |= {y for y, _ in quarters}
    kinds = {k for k, pattern in _QUERY_KINDS if pattern.search(low)}
    dates = []
    for m in _QUERY_DATE.finditer(low):
        g = m.groups()
        d = _date(g[2], g[0], g[1]) if g[0] else _date(g[5], g[4], g[3]) if g[4] else _date(*g[6:9])
        if d is not None:
            dates.append(d)
    return QueryFacts(
        frozenset(grams),
        frozenset(capitals),
        frozenset(years),
        max(years) if years else None,
        frozenset(quarters),
        bool(quarters) or bool(_Q_ONLY.search(low)),
        frozenset(kinds),
        tuple(dates),
        bool(_LATEST.search(low)),
    )


def company_match(filing: Filing, q: QueryFacts) -> float:
    """1 if the query names the company, 0.5 if a capitalised query word of 3+ letters is the
    first word of its name or begins a company key ("JPM" for JPMorgan), else 0."""
    if filing.companies & q.grams:
        return 1.0
    if filing.short & q.capitals:
        return 0.5
    if any(len(w) >= 3 and k.startswith(w) for w in q.capitals for k in filing.companies):
        return 0.5
    return 0.0


def period_match(filing: Filing, q: QueryFacts, newest: bool = False) -> float:
    """How well the filing's period fits the query, in [0, 1]: a dated filing filed within
    DATE_DAYS after a date the query names; the quarter it names; the year it is about (a year
    away scores less, so "forecast for FY2023" still finds the FY2022 report when there is no
    FY2023 one). Without any period the newest filing is preferred (`newest`)."""
    if filing.date is not None and q.dates:
        gaps = [(filing.date - d).days for d in q.dates]
        if any(0 <= g <= DATE_DAYS for g in gaps):
            return 1.0
        if any(abs(g) <= DATE_DAYS for g in gaps):
            return 0.9
    scale = 0.8 if q.dates else 1.0
    if q.quarters:
        if filing.quarter is not None and (filing.year, filing.quarter) in q.quarters:
            return scale
        return 0.4 * scale if filing.year in q.years else 0.0
    if q.year is not None and filing.year is not None:
        if filing.year == q.year:
            return scale
        return scale * max(
            0.5 if filing.year in q.years else 0.0, 0.7 - 0.3 * abs(filing.year - q.year)
        )
    return 0.5 if newest else 0.0


def kind_match(filing: Filing, q: QueryFacts) -> float:
    """1 when the filing is the kind the query names; by default the annual report for a year
    (then that year's fourth-quarter filings), the 10-Q (then the earnings release) for a
    quarter."""
    if q.kinds:
        return 1.0 if filing.kind in q.kinds else 0.0
    if q.quarterly:
        return {"10q": 1.0, "earnings": 0.7}.get(filing.kind or "", 0.0)
    if filing.kind == "10k":
        return 1.0
    return 0.5 if filing.quarter == 4 else 0.0


_FORM_WORD = re.compile(r"^(?:fy\d{2,4}|fy|10k|10q|8k|k|q)$")


def naming_words(query: str, filings: list[Filing]) -> set[str]:
    """The query's words that name one of `filings` (the matched ones): parts of a company key,
    and form words. Once they have picked the document they only pull in pages that repeat the
    company name (exhibits, signatures), so page ranking drops them. Bare years stay: the
    statement of the year asked for carries it in its column heads (measured: dropping them
    cost FinanceBench dev a tenth of its page recall)."""
    keys = {k for f in filings for k in f.companies | f.short}
    joined = "\0".join(keys)  # a word (no NUL) is in the joined keys iff it is in one key
    out = set()
    words = _WORD.findall(query.lower().replace("'s", "").replace("’s", ""))
    for i, w in enumerate(words):
        if w in joined and (len(w) >= 2 or w in keys) or _FORM_WORD.match(w):
            out.add(w)
        elif w in ("8", "10", "20") and words[i + 1 : i + 2] in (["k"], ["q"], ["f"]):
            out.add(w)  # "8-K": the number of a form name
    return out
