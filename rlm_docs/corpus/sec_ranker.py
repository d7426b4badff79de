"""The SEC-filing ranker: which filing a question names, and which page of it.

Collections of SEC filings (10-K, 10-Q, 8-K, with earnings releases beside them) hold many
near-identical documents of one company, and their questions are written by analysts. On top
of the text scores (`rlm_docs.corpus.search`) this ranker adds, for pages holding a query term:

    + filing * fit(document) + named * [page is a statement the question names]
    + implied * [page is a statement its line items live in]
    - form * [page is SEC form boilerplate: cover, signatures, certifications]

- Filing fit (`boost_names=True`): `rlm_docs.corpus.filings` scores in [0, 1] how well a
  document's company, period and kind (from its name and the metadata given at ingest) fit the
  question. Once that has picked the document, the words that named it (company words,
  "FY2018", "10-K") are left out of the page query, since they pull in exhibits and signature
  pages that repeat the company name; bare years stay (a statement carries its year in its
  column heads).
- Form boilerplate: an SEC form's cover, signature, exhibit-index and certification pages
  repeat the company name and dates a question gives and never answer it: -`form`.
- Statement kinds (`rlm_docs.corpus.headings`): pages that are a balance sheet, income, cash
  flow or equity statement; questions name them ("based on the cash flow statement", "P&L") or
  imply them by line item ("inventories", "capex").

Questions are rewritten before tokenizing: fiscal-year tokens gain the bare year
("FY2018"/"FY18" also search "2018") and finance abbreviations are spelled out ("capex" also
searches "capital expenditures"). Weights (`Ranking`) were chosen on FinanceBench dev and
checked on both halves of it and on KG-RAG (benchmarks/bench_retrieval.py prints the ablation).

`sec_collection` says whether a corpus is such a collection: most of its documents are SEC
forms by their metadata `doc_type`, or by their name where the metadata gives none.
"""

import bisect
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from rlm_docs.corpus.filings import (
    Filing,
    QueryFacts,
    company_match,
    describe,
    kind_match,
    naming_words,
    parse_query,
    period_match,
)
from rlm_docs.corpus.headings import KINDS, asked_kinds
from rlm_docs.corpus.metadata import normalise
from rlm_docs.corpus.rankers import Plan, Ranker, Ranking, query_words

if TYPE_CHECKING:
    from rlm_docs.corpus.corpus import Corpus

_ABBREVIATIONS = {
    "capex": "capital expenditures",
    "opex": "operating expenses",
    "cogs": "cost of goods sold",
    "ppe": "property plant equipment",
    "ppne": "property plant equipment",
    "sga": "selling general administrative",
    "rd": "research development",
    "da": "depreciation amortization",
    "fcf": "free cash flow",
    "eps": "earnings per share",
    "roa": "return on assets",
    "roe": "return on equity",
}
_ABBR = re.compile(
    r"\b(?:capex|opex|cogs|pp&e|ppe|ppne|sg&a|r&d|d&a|fcf|eps|roa|roe)\b", re.IGNORECASE
)
_ABBR_KEY = re.compile(r"[^a-z]")
_FISCAL = re.compile(r"\bfy\s*'?(\d{4}|\d{2})\b", re.IGNORECASE)
_SEC_FORM = re.compile(r"(?:10|8|20|6)-[KQF]\b")
_SEC_KINDS = frozenset({"10k", "10q", "8k"})
_FORM_KIND = KINDS.index("form")


def sec_collection(names: Sequence[str], metadata: Sequence[dict[str, object]]) -> bool:
    """Whether at least half of the documents are SEC forms: by the metadata's `doc_type`
    (normalised: `10-K`, `10-Q`, `8-K`, `20-F`, `6-K`), else by the name (`3M_2018_10K`)."""
    forms = 0
    for name, meta in zip(names, metadata, strict=True):
        doc_type = normalise(meta)[1]
        if doc_type:
            forms += bool(_SEC_FORM.match(doc_type))
        else:
            forms += describe(name).kind in _SEC_KINDS
    return bool(names) and 2 * forms >= len(names)


def _with_year(m: re.Match[str]) -> str:
    year = m.group(1)
    return f"{m.group(0)} {year if len(year) == 4 else '20' + year}"


def _spell_out(m: re.Match[str]) -> str:
    return f"{m.group(0)} {_ABBREVIATIONS[_ABBR_KEY.sub('', m.group(0).lower())]}"


def expand(query: str) -> str:
    """`query` with fiscal years and finance abbreviations expanded: pages write "2018" and
    "capital expenditures", questions "FY2018" and "capex"."""
    return _ABBR.sub(_spell_out, _FISCAL.sub(_with_year, query))


def query_text(query: str, drop: frozenset[str] | set[str] = frozenset()) -> str:
    """The question as search text: fiscal years and finance abbreviations expanded
    (`expand`), instruction words and `drop` (the words that named the filing) removed."""
    return query_words(expand(query), drop)


class SecRanker(Ranker):
    """Filing fit, finance query rewriting, statement kinds and form penalties."""

    name = "sec"

    def __init__(self, corpus: "Corpus") -> None:
        super().__init__(corpus)
        self.use_filings(
            [describe(n, m) for n, m in zip(corpus._names, corpus.metadata, strict=True)]
        )

    def use_filings(self, filings: list[Filing]) -> None:
        """Describe the documents by `filings` (one per document; benchmarks swap in filings
        read from names only to measure what the metadata adds)."""
        self.filings = filings
        self._strong: dict[str, list[int]] = {}
        self._short: dict[str, list[int]] = {}
        for i, f in enumerate(filings):
            for key in f.companies:
                self._strong.setdefault(key, []).append(i)
            for key in f.short:
                self._short.setdefault(key, []).append(i)
        self._keys = sorted(self._strong)

    def _candidates(self, q: QueryFacts) -> set[int]:
        """The documents `company_match` scores above 0, looked up by key instead of asking
        every document: a query n-gram equal to a company key, a capitalised word equal to a
        first-word key, or a capitalised word of 3+ letters that begins a company key (found by
        bisecting the sorted keys)."""
        out: set[int] = set()
        for key in q.grams & self._strong.keys():
            out.update(self._strong[key])
        for key in q.capitals & self._short.keys():
            out.update(self._short[key])
        for word in q.capitals:
            if len(word) >= 3:
                i = bisect.bisect_left(self._keys, word)
                while i < len(self._keys) and self._keys[i].startswith(word):
                    out.update(self._strong[self._keys[i]])
                    i += 1
        return out

    def filing_scores(self, query: str) -> np.ndarray:
        """Each document's fit to the company, period and kind the query names, in [0, 1]."""
        q = parse_query(query)
        company = np.zeros(len(self.filings))
        for i in self._candidates(q):
            company[i] = company_match(self.filings[i], q)
        if not company.any():
            return company
        newest: dict[str | None, tuple[tuple[int, int], int]] = {}
        for i in np.flatnonzero(company).tolist():
            f = self.filings[i]
            key = ((f.year or 0), (f.quarter or 5))
            if f.kind not in newest or key > newest[f.kind][0]:
                newest[f.kind] = (key, i)
        latest = {i for _, i in newest.values()}
        fit = np.zeros(len(self.filings))
        for i in np.flatnonzero(company).tolist():  # the documents the query names, only
            f = self.filings[i]
            fit[i] = 0.6 + 0.3 * period_match(f, q, i in latest) + 0.1 * kind_match(f, q)
        return company * fit

    def plan(self, query: str, w: Ranking, boost_names: bool) -> Plan:
        fit = self.filing_scores(query) if boost_names and w.filing else None
        drop: set[str] = set()
        if fit is not None and fit.any() and w.strip:
            drop = naming_words(query, [self.filings[i] for i in np.flatnonzero(fit)])
        text = expand(query)
        return Plan(query_words(text, drop), query_words(text) if drop else None, fit)

    def adjust(
        self,
        query: str,
        rows: np.ndarray,
        scores: np.ndarray,
        kinds: np.ndarray,
        plan: Plan,
        w: Ranking,
    ) -> None:
        # Each weight is added where its kind is (`where=`: one pass, no gathered copy).
        if w.form:
            np.subtract(scores, w.form, out=scores, where=kinds == _FORM_KIND)
        named, implied = asked_kinds(query)
        for asked, weight in ((named, w.named), (implied - named, w.implied)):
            for name in asked if weight else ():
                np.add(scores, weight, out=scores, where=kinds == KINDS.index(name))
        if plan.fit is not None:  # `rows` ascend, so each fitting document's pages are one slice
            docs = np.flatnonzero(plan.fit)
            ends = np.searchsorted(
                rows, np.stack([self.first[docs], self.first[docs] + self.counts[docs]], axis=1)
            )
            for d, (a, b) in zip(docs.tolist(), ends.tolist(), strict=True):
                scores[a:b] += w.filing * plan.fit[d]
