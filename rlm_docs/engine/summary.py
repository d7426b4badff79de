"""The corpus summary in the root prompt: every document, within a token budget.

The root never sees corpus text, only this summary, and in real-model runs a
list cut at 40 of 344 documents cost every run a `files()` step, while the whole listing in
detail (3.9k tokens of prompt for 344 filings) cost every step of every question. So the summary
names every document or company, in the most detailed form that fits `budget` tokens:

1. one line per document (`- 3M_2018_10K: 160 pages, 145,513 tokens`), when that fits;
2. else one line per company (name prefix before the year, or the metadata company), its
   documents grouped by kind with their periods and page range, e.g.
   `- 3M: 10K 2015-2022 (8 docs, 158-252 p.); 10Q 2023Q2 (1 doc, 80 p.)`;
3. else the same lines with kinds and periods only (`- ADOBE: 10-K 2015-2017, 2019-2022;
   10-Q 2022Q2`): `files()` gives counts and pages;
4. else as many of those lines as fit, then how many were left out (`files()` lists all).

Either form opens with a line saying the names are the exact `doc=` values and, when there are
periods, that they are the data set's labels (KG-RAG's `2023 Q3 NVDA` is NVIDIA's fiscal Q3
2024); a document line adds the metadata's `period_end` when there is one, never a guessed date.
Kind and period come from the metadata given at ingest (`DocInfo.doc_type`/`period`) when
present, else from the name (`rlm_docs.corpus.filings.describe`).
"""

import re
from collections.abc import Iterable
from typing import Any

from rlm_docs.corpus.filings import describe
from rlm_docs.tokens import count_tokens

# Every root turn resends the system prompt, so each token here costs a question one token per
# step: a few hundred filings fit in the short grouped form (kinds and periods) below this.
SUMMARY_TOKENS = 1_500
_PREFIX = re.compile(r"^(.+?)[_\s]+(?:19|20)\d\d")


def _group(doc: Any) -> str:
    """The company a document belongs to: the name before its year, else metadata, else ''."""
    m = _PREFIX.match(doc.name)
    if m:
        return m.group(1)
    return str(getattr(doc, "company", "") or "")


_FORM = re.compile(r"^(\d+)([a-z])$")


def _kind_period(doc: Any) -> tuple[str, str]:
    """(kind, period) for display: metadata first, the name for what it adds (a quarter)."""
    named = describe(doc.name)
    kind = str(getattr(doc, "doc_type", "") or "")
    if not kind:
        form = _FORM.match(named.kind or "")
        kind = f"{form.group(1)}-{form.group(2).upper()}" if form else (named.kind or "doc")
        kind = kind[:1].upper() + kind[1:]
    period = str(getattr(doc, "period", "") or "")
    from_name = f"{named.year}Q{named.quarter}" if named.year and named.quarter else ""
    if named.date:
        from_name = named.date.isoformat()
    elif named.year and not from_name:
        from_name = str(named.year)
    if not period or from_name.startswith(period):
        period = from_name or period
    return kind, period


def _periods(values: Iterable[str], runs: bool = False) -> str:
    """`2015-2022` for a run of consecutive years, else the distinct periods joined; with
    `runs`, every run of three or more consecutive years is shortened (`2015-2017, 2019`)."""
    distinct = sorted(set(v for v in values if v))
    if not distinct:
        return ""
    if len(distinct) > 2 and all(v.isdigit() for v in distinct):
        years = [int(v) for v in distinct]
        if years == list(range(years[0], years[-1] + 1)):
            return f"{years[0]}-{years[-1]}"
    if not runs:
        return ", ".join(distinct)
    out: list[list[str]] = []
    for v in distinct:
        last = out[-1] if out else None
        if last and v.isdigit() and last[-1].isdigit() and int(v) == int(last[-1]) + 1:
            last.append(v)
        else:
            out.append([v])
    return ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 2 else ", ".join(r) for r in out)


def _pages(counts: list[int]) -> str:
    lo, hi = min(counts), max(counts)
    return f"{lo} p." if lo == hi else f"{lo}-{hi} p."


def group_lines(docs: list[Any], detail: bool = True) -> list[str]:
    """One line per company: its documents by kind, with periods, counts and page range
    (without `detail`: kinds and periods only, year runs shortened)."""
    groups: dict[str, dict[str, list[Any]]] = {}
    shown: dict[str, str] = {}  # group key -> the spelling seen first
    loose: list[Any] = []
    for d in docs:
        company = _group(d)
        if not company:
            loose.append(d)
            continue
        kind, period = _kind_period(d)
        key = shown.setdefault(company.upper(), company)
        groups.setdefault(key, {}).setdefault(kind, []).append((period, d.num_pages))
    lines = []
    for company, kinds in groups.items():
        parts = []
        for kind, items in kinds.items():
            n = len(items)
            periods = _periods((p for p, _ in items), runs=not detail)
            count = f" ({n} doc{'s' if n > 1 else ''}, {_pages([c for _, c in items])})"
            parts.append(f"{kind} {periods}{count if detail else ''}".replace("  ", " ").strip())
        lines.append(f"- {company}: " + "; ".join(parts))
    lines += [f"- {d.name}" + (f" ({d.num_pages} p.)" if detail else "") for d in loose]
    return lines


def _period_end(doc: Any) -> str:
    """The metadata's `period_end` ('' if none): the date a filing covers up to, as given."""
    return str((getattr(doc, "meta", None) or {}).get("period_end") or "")


def document_lines(docs: list[Any]) -> list[str]:
    """One line per document, with the period end date when the metadata gives one."""
    lines = []
    for d in docs:
        end = _period_end(d)
        lines.append(
            f"- {d.name}: {d.num_pages} page{'' if d.num_pages == 1 else 's'}, {d.tokens:,} tokens"
            + (f", period ended {end}" if end else "")
        )
    return lines


# What a model must not guess about the listing (in real-model runs it called files() to learn
# that "2023 Q3 NVDA" was a name, and read "2023 Q3" as a fiscal quarter it is not).
NAMES_NOTE = "names are the exact `doc=` values"
PERIODS_NOTE = "Periods are the data set's labels, not necessarily fiscal periods."


def _has_periods(docs: list[Any]) -> bool:
    return any(getattr(d, "period", "") or describe(d.name).year for d in docs)


def documents_summary(docs: list[Any], budget: int = SUMMARY_TOKENS) -> list[str]:
    """The document part of the summary, in the most detailed form within `budget` tokens,
    under a line saying the names are `doc=` values (and what a period label is, if any)."""
    periods = f" {PERIODS_NOTE}" if _has_periods(docs) else ""
    full = [f"Documents ({NAMES_NOTE}).{periods}", *document_lines(docs)]
    if count_tokens("\n".join(full)) <= budget:
        return full
    names = (
        f'{periods} Names look like {docs[0].name}; files("COMPANY") lists a company\'s '
        f"names with their pages ({NAMES_NOTE})."
    )
    head = f"Documents by company (name prefix): kind, periods (count, page range).{names}"
    grouped = group_lines(docs)
    if count_tokens("\n".join([head, *grouped])) <= budget:
        return [head, *grouped]
    head = f"Documents by company (name prefix): kind and periods.{names}"
    grouped = group_lines(docs, detail=False)
    if count_tokens("\n".join([head, *grouped])) <= budget:
        return [head, *grouped]
    kept, used = [head], count_tokens(head) + 20
    for line in grouped:
        cost = count_tokens(line) + 1
        if used + cost > budget:
            break
        kept.append(line)
        used += cost
    left = len(grouped) - (len(kept) - 1)
    kept.append(f"- ... and {left} more companies (files() lists every document)")
    return kept
