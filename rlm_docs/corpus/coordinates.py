"""Paragraph coordinates (document, section, paragraph) and paragraph-level retrieval, as the
structure-aware reading agents use them (`deepread`, `docdancer`).

`toc`/`read_section` (`rlm_docs.corpus.sections`) give a section with its subsections, which
is what a reader of a whole section wants; a coordinate must name one paragraph once, so here a
section holds only its *own* text: from its heading to the next heading of any level (a
paragraph under a subsection belongs to the subsection). Section ids are `toc`'s (`s1`...,
or `p1`... for a document without headings, one pseudo-section per page); text before a
document's first heading is section `s0`. Paragraphs are numbered from 0 within their section.

Retrieval ranks paragraphs, not pages: BM25 (the page index's tokenizer, `rlm_docs.corpus.search`,
and the SEC ranker's query cleaning, `rlm_docs.corpus.sec_ranker.query_text`) over every paragraph of the documents given, with the hit's score;
a hit can be widened by a scanning window that never leaves its section (`window`), and a
section is read by a half-open paragraph range (`read`). `full_text` finds the paragraphs
holding given words or phrases (full-text search, every hit counted). Outlines are cached per
document.
"""

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import bm25s
import numpy as np

from rlm_docs.corpus.search import Tokenizer, bm25_index
from rlm_docs.corpus.sec_ranker import query_text
from rlm_docs.corpus.sections import Heading, find_headings, outline, paragraphs
from rlm_docs.errors import CorpusError
from rlm_docs.tokens import count_tokens

_CACHE_SIZE = 64


@dataclass(frozen=True)
class Paragraph:
    text: str
    page: int


@dataclass(frozen=True)
class Section:
    """One section's own paragraphs (module docstring); `tokens`: their cl100k count."""

    id: str
    title: str
    level: int
    page: int
    paragraphs: tuple[Paragraph, ...]
    tokens: int


@dataclass(frozen=True)
class Hit:
    """A retrieved paragraph at its coordinates, with its BM25 score."""

    doc: str
    section: str
    paragraph: int
    page: int
    score: float
    text: str


def _own_lines(pages: list[str], heads: list[Heading], i: int) -> list[tuple[int, str]]:
    """(page, line) pairs from heading `i` to the next heading of any level."""
    head = heads[i]
    nxt = heads[i + 1] if i + 1 < len(heads) else None
    lines: list[tuple[int, str]] = []
    for pno in range(head.page, (nxt.page if nxt else len(pages)) + 1):
        text = pages[pno - 1].splitlines()
        first = head.line if pno == head.page else 0
        stop = nxt.line if nxt is not None and pno == nxt.page else len(text)
        lines.extend((pno, line) for line in text[first:stop])
    return lines


def _section(sid: str, title: str, level: int, page: int, lines: list[tuple[int, str]]) -> Section:
    paras = tuple(Paragraph(p["text"], p["page"]) for p in paragraphs(lines))
    tokens = count_tokens("\n\n".join(p.text for p in paras))
    return Section(sid, title, level, page, paras, tokens)


def document_sections(pages: list[str]) -> list[Section]:
    """The sections of a document given as page strings, in order (module docstring)."""
    heads = find_headings(pages)
    if not heads:
        return [
            _section(e["section"], e["title"], 1, n, [(n, x) for x in pages[n - 1].splitlines()])
            for n, e in enumerate(outline(pages, heads), start=1)
        ]
    out = []
    first = heads[0]
    before = [(p, line) for p in range(1, first.page) for line in pages[p - 1].splitlines()]
    before += [(first.page, line) for line in pages[first.page - 1].splitlines()[: first.line]]
    if any(line.strip() for _, line in before):
        out.append(_section("s0", "(before the first heading)", 1, 1, before))
    for i, entry in enumerate(outline(pages, heads)):
        out.append(
            _section(
                entry["section"],
                entry["title"],
                entry["level"],
                entry["page_start"],
                _own_lines(pages, heads, i),
            )
        )
    return out


class _Cache:
    """Bounded LRU of documents' sections (per corpus path, or corpus object, and document)."""

    def __init__(self) -> None:
        self._items: OrderedDict[tuple[str, str], list[Section]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, corpus: Any, doc: str) -> list[Section]:
        path = getattr(corpus, "path", None)
        key = (str(path) if path is not None else f"mem:{id(corpus)}", doc)
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        found = document_sections(corpus.pages(doc, 1, corpus.num_pages(doc)))
        with self._lock:
            self._items[key] = found
            if len(self._items) > _CACHE_SIZE:
                self._items.popitem(last=False)
        return found


_cache = _Cache()


def resolve(corpus: Any, doc: str) -> str:
    """The corpus's name of `doc` (CorpusError naming it when unknown)."""
    name = corpus.resolve(str(doc))
    if name is None:
        raise CorpusError(f"unknown document {doc!r}")
    return str(name)


def sections(corpus: Any, doc: str) -> list[Section]:
    """The sections of `doc`, each with its own paragraphs (cached)."""
    return _cache.get(corpus, resolve(corpus, doc))


def section(corpus: Any, doc: str, sid: str) -> Section:
    """Section `sid` of `doc`: its id (`s3`, `3`), else a case-insensitive part of a title."""
    found = sections(corpus, doc)
    key = str(sid).strip().lower()
    for s in found:
        if s.id.lower() == key or (key.isdigit() and s.id[1:] == key):
            return s
    for s in found:
        if key and key in s.title.lower():
            return s
    raise CorpusError(f"document {doc!r} has no section {sid!r} (see its table of contents)")


def read(corpus: Any, doc: str, sid: str, start: int, end: int) -> list[tuple[int, Paragraph]]:
    """Paragraphs `start`..`end - 1` of one section, in order, with their numbers (half-open:
    `end` is not read; an `end` past the section stops at its last paragraph)."""
    s = section(corpus, doc, sid)
    if start < 0 or end < start:
        raise CorpusError(f"paragraph range {start}..{end} of {s.id}: need 0 <= start <= end")
    return [(i, s.paragraphs[i]) for i in range(start, min(end, len(s.paragraphs)))]


def window(
    corpus: Any, hit: Hit, before: int, after: int
) -> tuple[str, list[tuple[int, Paragraph]]]:
    """The hit's section id and paragraphs `paragraph - before` .. `paragraph + after`, clipped
    to the section (a window never reads into the next or previous section)."""
    s = section(corpus, hit.doc, hit.section)
    first = max(hit.paragraph - before, 0)
    return s.id, read(corpus, hit.doc, s.id, first, hit.paragraph + after + 1)


class ParagraphIndex:
    """BM25 over every paragraph of `docs` (module docstring)."""

    def __init__(self, corpus: Any, docs: list[str]) -> None:
        self.where: list[tuple[str, str, int, Paragraph]] = []
        for doc in docs:
            for s in sections(corpus, doc):
                self.where += [
                    (resolve(corpus, doc), s.id, i, p) for i, p in enumerate(s.paragraphs)
                ]
        self.tokenizer = Tokenizer()
        ids = [self.tokenizer.ids(p.text) for *_, p in self.where]
        self.bm25 = bm25_index(ids, self.tokenizer.vocab) if self.where else bm25s.BM25()

    def search(self, query: str, k: int) -> list[Hit]:
        """The top `k` paragraphs holding a query term, best first (ties in document order)."""
        qids = sorted(set(self.tokenizer.ids(query_text(query), grow=False)))
        if not qids or not self.where or k <= 0:
            return []
        scores = np.asarray(self.bm25.get_scores(qids), dtype=np.float64)
        rows = np.flatnonzero(scores > 0)
        order = rows[np.lexsort((rows, -scores[rows]))][:k]
        return [
            Hit(doc, sid, i, p.page, round(float(scores[r]), 4), p.text)
            for r in order.tolist()
            for doc, sid, i, p in [self.where[r]]
        ]


@dataclass(frozen=True)
class Match:
    """A paragraph holding at least one keyword: its coordinates, how many distinct keywords
    it holds, and where the first one starts in its text."""

    doc: str
    section: str
    paragraph: int
    page: int
    text: str
    keywords: int
    at: int


def full_text(corpus: Any, docs: list[str], keywords: list[str]) -> list[Match]:
    """Every paragraph of `docs` holding one of `keywords` (words or phrases, whole words,
    case-insensitive), those holding more distinct keywords first, then in document order."""
    wanted = [" ".join(k.split()) for k in keywords if k.strip()]
    patterns = [re.compile(rf"(?<!\w){re.escape(k)}(?!\w)", re.IGNORECASE) for k in wanted]
    found: list[Match] = []
    for doc in docs:
        name = resolve(corpus, doc)
        for s in sections(corpus, name):
            for i, p in enumerate(s.paragraphs):
                flat = " ".join(p.text.split())
                starts = [m.start() for m in (pat.search(flat) for pat in patterns) if m]
                if starts:
                    found.append(Match(name, s.id, i, p.page, flat, len(starts), min(starts)))
    order = sorted(range(len(found)), key=lambda n: (-found[n].keywords, n))
    return [found[n] for n in order]


def snippet_at(text: str, at: int, width: int) -> str:
    """About `width` characters of `text` around offset `at`, with … where it was cut."""
    start = max(0, min(at - width // 3, len(text) - width))
    out = text[start : start + width]
    return ("…" if start else "") + out + ("…" if start + width < len(text) else "")
