"""Page search: BM25 over page text and page heading, plus what the corpus's ranker knows of
the document and the page a question wants.

Tokens are lowercase runs of letters/digits, minus English stopwords, Snowball-stemmed
(PyStemmer). Two indexes (bm25s, Lucene BM25, k1=1.5, b=0.75) are built at ingest and saved in
the store's `bm25/` directory (the heading index in `bm25/head/`, each page's statement kind in
`bm25/kinds.npy`, its title in `bm25/titles.npy`, `rlm_docs.corpus.titles`), loaded
memory-mapped; older stores get the missing parts built on load (titles: per hit).

A page's score, for pages holding at least one query term (`Ranking` holds the weights):

    text(page)  = (bm25_body + head * bm25_head) / max over pages      in [0, 1]
    score(page) = text(page) (+ doc * the document's share of the text score, when the ranker
                  found no document the question names) + the ranker's evidence

- Heading field: the page's first HEAD_CHARS characters; a statement title sits there, so a
  question about the balance sheet finds the statement rather than prose mentioning it.
- Document evidence (only when no document fits, e.g. reports and papers without company
  names): questions are about one document, so each page gains `doc` times its document's
  summed text score over the square root of its page count (scaled to 1 for the best
  document): a page of a document that matches the question throughout beats a stray page
  elsewhere.
- The ranker (`rlm_docs.corpus.rankers`) turns the question into search text and adds what a
  kind of collection knows: the generic one drops instruction words only; the SEC one
  (`rlm_docs.corpus.sec_ranker`) adds filing fit, statement kinds and form penalties.
  `ranker_name` picks it: the one the store's manifest names (`ingest --ranker`), else `sec`
  for a collection of SEC filings (`sec_collection`), else `generic`.

When all top `k` pages come from one document, the `k`-th place goes to the best page of
another document (`diverse`): a hedge against having picked the wrong filing (FinanceBench
dev: document recall@5 0.940 → 0.955 at equal page recall; no change on the other sets).
"""

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import bm25s
import numpy as np
import Stemmer
from bm25s.stopwords import STOPWORDS_EN
from bm25s.tokenization import Tokenized

from rlm_docs.corpus.document import Hit
from rlm_docs.corpus.headings import KINDS, page_kind, page_title, title_and_kind
from rlm_docs.corpus.rankers import Ranker, Ranking
from rlm_docs.corpus.sec_ranker import SecRanker, sec_collection
from rlm_docs.corpus.titles import PageTitles
from rlm_docs.errors import CorpusError

if TYPE_CHECKING:
    from rlm_docs.corpus.corpus import Corpus

__all__ = ["RANKERS", "Ranking", "Searcher", "build_index", "cutoff", "load_index", "snippet"]

DIVERSE_DEPTH = 4  # pages per hit searched for another document's best page
CUTOFF_SAMPLE = 16  # every how many scores `cutoff` samples
KINDS_FILE = "kinds.npy"
HEAD_CHARS = 300
RANKERS: dict[str, type[Ranker]] = {"generic": Ranker, "sec": SecRanker}
SNIPPET_CHARS = 200
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(STOPWORDS_EN)
_STEMMER = Stemmer.Stemmer("english")
STEM_CACHE = 200_000
_STEM_CACHE: dict[bytes, str | None] = {}
_TOKENIZER = {"pattern": _WORD.pattern, "stopwords": "bm25s-en", "stemmer": "snowball-english"}


# Bytes other than a-z and 0-9 become spaces: the words of `_WORD` on lowercased text, found
# by `bytes.translate` and `bytes.split` at about half the cost of the regular expression (a
# non-ASCII character becomes "?" and so splits words as it does for `_WORD`).
_NOT_WORD = bytes(c if c in b"abcdefghijklmnopqrstuvwxyz0123456789" else 32 for c in range(256))
# Lowercasing is done on those bytes too (A-Z become a-z): `str.lower` costs more than the
# rest, and it turns only two non-ASCII characters into ASCII or into two characters
# (`LOWER_TO_ASCII`, checked against every code point by the tests); a text holding neither
# gives the same bytes either way.
LOWER_TO_ASCII = "\u0130\u212a"  # İ → "i̇", the Kelvin sign → "k"
_LOWER_NOT_WORD = bytes(range(256)).lower().translate(_NOT_WORD)


def word_bytes(text: str) -> bytes:
    """`text` lowercased as ASCII bytes, one per character, with every byte that is not a-z or
    0-9 a space (non-ASCII characters included)."""
    if any(c in text for c in LOWER_TO_ASCII):
        return text.lower().encode("ascii", "replace").translate(_NOT_WORD)
    return text.encode("ascii", "replace").translate(_LOWER_NOT_WORD)


class Tokenizer:
    """Text → stemmed token ids; caches the stem id of every raw word seen. A new stem gets
    the next id in page order (the new words of a page in sorted order), so two ingests of the
    same pages give the same vocabulary and bit-identical scores; a set's own order would
    follow Python's hash randomisation."""

    def __init__(self, vocab: dict[str, int] | None = None) -> None:
        self.vocab: dict[str, int] = vocab if vocab is not None else {"": 0}
        self._stemmer = Stemmer.Stemmer("english")
        self._ids: dict[bytes, int] = {}

    def _learn(self, fresh: list[bytes], grow: bool) -> None:
        words = [w.decode("ascii") for w in fresh]
        for raw, w, s in zip(fresh, words, self._stemmer.stemWords(words), strict=True):
            if w in _STOP:
                self._ids[raw] = -1
            elif s in self.vocab:
                self._ids[raw] = self.vocab[s]
            elif grow:
                self._ids[raw] = self.vocab[s] = len(self.vocab)
            else:
                self._ids[raw] = -1

    def ids(self, text: str, grow: bool = True) -> list[int]:
        words = word_bytes(text).split()
        fresh = set(words).difference(self._ids)
        if fresh:
            self._learn(sorted(fresh), grow)
        get = self._ids.__getitem__
        return [i for i in map(get, words) if i >= 0]


@dataclass(frozen=True, slots=True)
class Index:
    """The body and heading indexes of one corpus (same vocabulary, one entry per page),
    each page's statement kind (index into `KINDS`, -1 for none) and title."""

    body: bm25s.BM25
    head: bm25s.BM25
    kinds: np.ndarray
    titles: PageTitles | None = None  # None: a store written before titles were stored


def page_head(text: str) -> str:
    """A page's heading field: its first HEAD_CHARS characters, whitespace collapsed."""
    return " ".join(text[: HEAD_CHARS * 8].split())[:HEAD_CHARS]


def bm25_index(ids: list[list[int]], vocab: dict[str, int]) -> bm25s.BM25:
    """A BM25 index over token ids. Entries that hold no word at all (a corpus of blank or
    one-letter pages) leave bm25s an average length of 0: it divides 0 by 0 for terms no entry
    has, so numpy's warning about it is silenced rather than shown to the user."""
    retriever = bm25s.BM25()
    with np.errstate(invalid="ignore", divide="ignore"):
        retriever.index(Tokenized(ids=ids, vocab=vocab), show_progress=False)
    return retriever


def _head_index(texts: Sequence[str], tok: "Tokenizer") -> bm25s.BM25:
    # Heading words were all seen in the bodies; a word cut at the edge is simply dropped.
    return bm25_index([tok.ids(page_head(t), grow=False) for t in texts], tok.vocab)


def page_kinds(texts: Sequence[str]) -> np.ndarray:
    """Each page's statement kind as an index into `KINDS` (-1: not a statement)."""
    return _kinds(page_kind(t) for t in texts)


def _kinds(kinds: Iterable[str | None]) -> np.ndarray:
    code = {k: i for i, k in enumerate(KINDS)}
    return np.array([code.get(k or "", -1) for k in kinds], dtype=np.int8)


def build_index(texts: Sequence[str], out: Path | None = None) -> Index:
    """Index page `texts`; save to `out` (with the tokenizer settings) when given."""
    tok = Tokenizer()
    body = bm25_index([tok.ids(t) for t in texts], tok.vocab)
    head = _head_index(texts, tok)
    heads = [title_and_kind(t) for t in texts]
    titles = PageTitles.of([title for title, _ in heads])
    index = Index(body, head, _kinds(kind for _, kind in heads), titles)
    if out is not None:
        body.save(out, show_progress=False)
        head.save(out / "head", show_progress=False)
        np.save(out / KINDS_FILE, index.kinds)
        titles.save(out)
        (out / "tokenizer.json").write_text(json.dumps(_TOKENIZER) + "\n")
    return index


def load_index(path: Path, texts: Callable[[], Sequence[str]]) -> Index:
    """The memory-mapped indexes saved by `build_index` (CorpusError naming the directory).
    Stores written before the heading field or the page kinds existed get them built in memory
    from `texts()`; without stored titles, each hit's title is found when it is returned."""
    try:
        body = bm25s.BM25.load(path, mmap=True, show_progress=False, verbosity=0)
        if (path / "head").is_dir():
            head = bm25s.BM25.load(path / "head", mmap=True, show_progress=False, verbosity=0)
        else:
            head = _head_index(texts(), Tokenizer(body.vocab_dict))
        stored = (path / KINDS_FILE).is_file()
        kinds = np.load(path / KINDS_FILE) if stored else page_kinds(texts())
        titles = PageTitles.load(path)
    except (OSError, ValueError) as exc:
        raise CorpusError(f"{path}: cannot load the BM25 index ({exc})") from None
    return Index(_plain(body), _plain(head), kinds, titles)


def _plain(retriever: bm25s.BM25) -> bm25s.BM25:
    """`retriever` with its memory-mapped score arrays seen as plain ndarrays over the same
    mapping: scoring slices them once per query term, and every slice of an `np.memmap` runs
    its Python `__array_finalize__` (a fifth of the BM25 time of a FinanceBench query)."""
    for key in ("data", "indices", "indptr"):
        array = retriever.scores[key]
        if isinstance(array, np.memmap):
            retriever.scores[key] = array.view(np.ndarray)
    return retriever


def _stem(word: bytes) -> str | None:
    """Snowball stem of the ASCII `word` if the word starts like it (None if not: see
    `_term_positions`), cached by its bytes (the cache is dropped past STEM_CACHE entries)."""
    if len(_STEM_CACHE) > STEM_CACHE:
        _STEM_CACHE.clear()
    stem = _STEMMER.stemWord(word.decode("ascii"))
    own = stem if word.startswith(stem[: max(2, len(stem) - 1)].encode("ascii")) else None
    _STEM_CACHE[word] = own
    return own


Prefixes = list[tuple[bytes, frozenset[str]]]


def _term_prefixes(terms: Iterable[str]) -> Prefixes:
    """The stems `terms` grouped by the prefix their words start with (see `_term_positions`),
    each prefix with a space before it: what `bytes.find` looks for, with no pattern to compile
    for a new question."""
    groups: dict[bytes, set[str]] = {}
    for term in terms:
        prefix = b" " + term[: max(2, len(term) - 1)].encode("ascii", "replace")
        groups.setdefault(prefix, set()).add(term)
    return [(prefix, frozenset(group)) for prefix, group in sorted(groups.items())]


def _term_positions(text: str, prefixes: Prefixes) -> list[tuple[int, str]]:
    """(offset, stem) of every word of `text` whose stem is one of the terms of `prefixes`
    (`_term_prefixes`), in text order. Only words starting like a stem are stemmed (a stem is
    its words' prefix, give or take its last letter: "compani" ← "company"). In
    `word_bytes(text)` (every character that is not a-z or 0-9 a space, offsets kept: one byte
    per character), a word start is a space followed by a prefix, so one `bytes.find` per
    prefix lands on word starts only."""
    if not prefixes:
        return []
    words = b" " + word_bytes(text) + b" "
    find, index, cached = words.find, words.index, _STEM_CACHE.get
    hits: list[tuple[int, str]] = []
    for prefix, group in prefixes:
        i = find(prefix)
        while i >= 0:
            end = index(b" ", i + 1)
            word = words[i + 1 : end]
            stem = cached(word, "")
            if stem == "":
                stem = _stem(word)
            # A word counts under its own stem's prefix only (`_stem` gives None for a word
            # that does not start like its stem), so no word is counted twice.
            if stem is not None and stem in group:
                hits.append((i, stem))
            i = find(prefix, end)
    hits.sort()
    return hits


def snippet(text: str, terms: set[str], width: int = SNIPPET_CHARS) -> str:
    """About `width` characters of `text` (whitespace collapsed) around the densest cluster of
    query `terms` (stemmed); the page start if none occurs."""
    return _snippet(text, _term_prefixes(terms), width)


def _snippet(text: str, prefixes: Prefixes, width: int = SNIPPET_CHARS) -> str:
    """`snippet` with the terms' prefixes given: a search finds them once for all its hits."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    hits = _term_positions(flat, prefixes)
    best, best_n = 0, 0
    j = 0
    window: dict[str, int] = {}  # stems of hits[j : i + 1], counted
    for pos, stem in hits:
        window[stem] = window.get(stem, 0) + 1
        while hits[j][0] < pos - width // 2:
            left = hits[j][1]
            window[left] -= 1
            if not window[left]:
                del window[left]
            j += 1
        if len(window) > best_n:
            best, best_n = hits[j][0], len(window)
    start = max(0, min(best - width // 4, len(flat) - width))
    if start:
        cut = flat.find(" ", start)
        start = cut + 1 if 0 <= cut < start + 20 else start
    out = flat[start : start + width].strip()
    return ("…" if start else "") + out + ("…" if start + width < len(flat) else "")


class Searcher:
    """Scores every page of one corpus for a query (exact top-k, no approximation)."""

    def __init__(self, corpus: "Corpus", index: Index) -> None:
        self.corpus = corpus
        self.index = index
        self.tokenizer = Tokenizer(index.body.vocab_dict)
        counts = np.asarray(corpus._counts, dtype=np.int64)
        self.doc_of_page = np.repeat(np.arange(len(counts)), counts)
        self.first = corpus._first
        self.counts = counts
        self._rankers: dict[str, Ranker] = {}
        self.default_ranker = ranker_name(corpus)
        self._inverse_vocab: dict[int, str] | None = None

    @classmethod
    def open(cls, corpus: "Corpus") -> "Searcher":
        path = corpus.path / "bm25" if corpus.path is not None else None
        if path is not None and path.is_dir():
            index = load_index(path, corpus._text.to_pylist)
        else:
            index = build_index(corpus._text.to_pylist())
        n = int(corpus._counts.sum())
        for size, what in (
            (index.body.scores["num_docs"], "BM25 index"),
            (index.head.scores["num_docs"], "BM25 heading index"),
            (len(index.kinds), "page kinds"),
            (n if index.titles is None else len(index.titles), "page titles"),
        ):
            if size != n:
                raise CorpusError(f"{path}: {what} has {size} pages, corpus {n}")
        return cls(corpus, index)

    def ranker(self, name: str) -> Ranker:
        """The ranker called `name` for this corpus, built once (CorpusError for an unknown
        name)."""
        ranker = self._rankers.get(name)
        if ranker is None:
            if name not in RANKERS:
                raise CorpusError(f"unknown ranker {name!r} (choose from {', '.join(RANKERS)})")
            ranker = self._rankers[name] = RANKERS[name](self.corpus)
        return ranker

    def search(
        self,
        query: str,
        k: int,
        document: int | list[int] | None,
        boost_names: bool,
        ranking: Ranking | None = None,
        ranker: str | None = None,
    ) -> list[Hit]:
        w = ranking or Ranking()
        if k <= 0:
            return []
        rank = self.ranker(ranker or self.default_ranker)
        plan = rank.plan(query, w, boost_names)
        fit = plan.fit
        qids = sorted(set(self.tokenizer.ids(plan.text, grow=False)))
        if not qids and plan.fallback is not None:
            qids = sorted(set(self.tokenizer.ids(plan.fallback, grow=False)))
        if not qids:
            return []
        body = self.index.body.get_scores(qids)
        head = self.index.head.get_scores(qids) if w.head else None
        found = body > 0 if head is None else (body > 0) | (head > 0)
        if document is None:
            rows = np.flatnonzero(found)
        else:  # one document or several: only their pages can be returned
            docs = [document] if isinstance(document, int) else document
            span = np.sort(
                np.concatenate(
                    [np.arange(self.first[d], self.first[d] + self.counts[d]) for d in docs]
                    or [np.zeros(0, dtype=np.int64)]
                )
            )
            rows = span[found[span]]
        if not len(rows):
            return []
        # Only `rows` (pages with a query term) can be returned, so the ranking stages are
        # computed on them alone, from per-page and per-document features. The text score is
        # summed over every page (0 off `rows`) and gathered once: the document's share needs
        # every page's, and one gather costs less than three on four fifths of the pages.
        if head is None:
            text = body.astype(np.float64)
        else:
            text = head.astype(np.float64)
            text *= w.head
            text += body
        scores = text[rows]
        top = scores.max()
        scores /= top
        if w.doc and document is None and (fit is None or not fit.any()):
            every = text  # `rows` are every page with a query term here
            every /= top
            per_doc = np.add.reduceat(every, self.first) / np.sqrt(self.counts)
            per_doc /= per_doc.max() or 1.0
            scores += w.doc * per_doc[self.doc_of_page[rows]]
        rank.adjust(query, rows, scores, self.index.kinds[rows], plan, w)
        depth = min(len(rows), DIVERSE_DEPTH * k) if w.diverse else k
        if len(rows) > depth:  # keep every page tied with the cut-off, then order by (score, row)
            keep = np.flatnonzero(scores >= cutoff(scores, depth))
            rows, scores = rows[keep], scores[keep]
        order = np.lexsort((rows, -scores))
        rows, scores = rows[order], scores[order]
        if w.diverse and k > 1 and len(rows) > k:
            owners = self.doc_of_page[rows]
            other = np.flatnonzero(owners != owners[0])
            if len(other) and other[0] >= k:  # the top k are all one document's pages
                pick = np.concatenate([np.arange(k - 1), other[:1]])
                rows, scores = rows[pick], scores[pick]
        terms = self._terms(qids)
        prefixes = _term_prefixes(terms)
        hits = []
        for r, score in zip(rows[:k].tolist(), scores[:k].tolist(), strict=True):
            d = int(self.doc_of_page[r])
            text = self.corpus._text[r].as_py()
            title = page_title(text) if self.index.titles is None else self.index.titles[r]
            hits.append(
                Hit(
                    self.corpus._names[d],
                    r - int(self.first[d]) + 1,
                    round(score, 4),
                    _snippet(text, prefixes),
                    title,
                )
            )
        return hits

    def _terms(self, qids: list[int]) -> set[str]:
        if self._inverse_vocab is None:
            self._inverse_vocab = {i: s for s, i in self.tokenizer.vocab.items()}
        return {self._inverse_vocab[i] for i in qids}


def cutoff(scores: np.ndarray, depth: int) -> float:
    """The `depth`-th largest of `scores` (more than `depth` of them). Partitioning every
    score moves them all; the `depth`-th largest of every CUTOFF_SAMPLE-th score is a value at
    least `depth` scores reach, so only the scores from it up are partitioned (same value, in
    half the time on a FinanceBench query's forty thousand pages)."""
    sample = scores[::CUTOFF_SAMPLE]
    if len(sample) >= depth:
        scores = scores[scores >= np.partition(sample, -depth)[-depth]]
    return float(np.partition(scores, -depth)[-depth])


def ranker_name(corpus: "Corpus") -> str:
    """The ranker a corpus searches with unless told otherwise: the one its store's manifest
    names (`rlm-docs ingest --ranker`), else `sec` for a collection of SEC filings, else
    `generic`."""
    named = corpus.manifest.get("ranker")
    if isinstance(named, str) and named in RANKERS:
        return named
    return "sec" if sec_collection(corpus._names, corpus.metadata) else "generic"
