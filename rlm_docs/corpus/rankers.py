"""Rankers: what a kind of collection adds to page search beyond BM25.

Page search (`rlm_docs.corpus.search`) is generic: BM25 over page body and heading, a
document's share of the text score when no document is named, and a place in the top `k` kept
for another document. What a question says about *which* document and *which kind of page*
it wants is knowledge of one kind of collection, and lives in a ranker:

- `generic` (`Ranker`, the default): the question's instruction words ("assume", "round",
  "explain", ...) are dropped; nothing else is assumed about the documents.
- `sec` (`rlm_docs.corpus.sec_ranker`): SEC filings (10-K, 10-Q, 8-K) and their earnings
  releases: the filing a question names, finance abbreviations, statement pages, form
  boilerplate. Its weights were chosen on FinanceBench dev.

A ranker shapes a search in two places: `plan` turns the question into the text to search (and
may score how well each document fits it), and `adjust` adds its page evidence to the text
scores of the pages that hold a query term. Which ranker a corpus gets is decided in
`rlm_docs.corpus.search.ranker_name`.
"""

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from rlm_docs.corpus.corpus import Corpus

# The rankers by name (`rlm_docs.corpus.search.RANKERS` maps them to their classes; the CLI
# offers these names without importing search).
RANKER_NAMES = ("generic", "sec")

HEAD_WEIGHT = 0.5
FILING_WEIGHT = 2.0
NAMED_WEIGHT = 0.5
IMPLIED_WEIGHT = 0.4
DOC_WEIGHT = 0.3
FORM_PENALTY = 0.3
_INSTRUCTION_WORDS = (
    "answer answers answering question questions following assume analyst analysts please "
    "provide response respond round rounded decimal places calculate compute using based "
    "primarily information shown stated outlined plainly judgment judgments abilities best "
    "help us we you your units explain state useful metric relevant meaningful like "
    "approximation reasonable exact possible"
)
QUERY_STOPWORDS = frozenset(_INSTRUCTION_WORDS.split()) | {"s", "t"}
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True, slots=True)
class Ranking:
    """Weights of the score parts (see `rlm_docs.corpus.search`); `Corpus.search(ranking=...)`
    takes another one for ablations. `head`, `doc` and `diverse` apply to every ranker; the
    others weigh the SEC ranker's evidence and are ignored by the generic one."""

    head: float = HEAD_WEIGHT
    filing: float = FILING_WEIGHT
    strip: bool = True  # keep the words that named the filing out of page ranking
    doc: float = DOC_WEIGHT
    form: float = FORM_PENALTY
    diverse: bool = True
    named: float = NAMED_WEIGHT
    implied: float = IMPLIED_WEIGHT


@dataclass(frozen=True, slots=True)
class Plan:
    """What to search for: `text` (tokenized against the index), `fallback` when `text` holds
    no indexed word, and `fit`, each document's fit to the question in [0, 1] when the ranker
    scores documents (None otherwise)."""

    text: str
    fallback: str | None = None
    fit: "np.ndarray | None" = None


def query_words(text: str, drop: frozenset[str] | set[str] = frozenset()) -> str:
    """`text` lowercased as words, minus the words that only instruct the answerer and `drop`."""
    skip = QUERY_STOPWORDS | drop
    return " ".join(w for w in _WORD.findall(text.lower()) if w not in skip)


class Ranker:
    """The generic ranker: the question's words, no evidence beyond the text scores."""

    name = "generic"

    def __init__(self, corpus: "Corpus") -> None:
        self.first = corpus._first
        self.counts = corpus._counts

    def plan(self, query: str, w: Ranking, boost_names: bool) -> Plan:
        """The text to search for `query` (`boost_names`: the ranker may score documents)."""
        return Plan(query_words(query))

    def adjust(
        self,
        query: str,
        rows: "np.ndarray",
        scores: "np.ndarray",
        kinds: "np.ndarray",
        plan: Plan,
        w: Ranking,
    ) -> None:
        """Add this ranker's evidence to `scores` (the text scores of page `rows`, ascending;
        `kinds` their statement kinds) in place."""
