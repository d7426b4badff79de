"""Which pages and characters of the corpus a run looked at: page spans, slices, and text that
reached a model aligned back to the corpus (the text-alignment part of the decomposition
record, `rlm_docs.eval.decomposition`).

When code uses `context` in ways its text does not show (a regex over the whole string, a loop
over its lines, slices at computed offsets), the text that reached a model (sub-call prompts,
printed cell output) is aligned back to the rendered corpus, at two levels, and what is found
counts its characters and pages:

- **verbatim runs**: runs of at least `MATCH_CHARS` characters found as they are in the corpus
  (seeded at word starts, extended character by character);
- **lines and records**: a line of the text that, once a numbering or bullet prefix ("12. ",
  "[3]", "- ") is dropped and spaces are normalised, equals a corpus line; or, for a record
  line of fields (`||`, `|` or tab between them, an optional `Label: ` before each), whose
  fields equal fields of the corpus, each field counting on its own. Code that re-formats
  records (one per numbered line, fields re-joined) is thus still counted. A line or field
  counts only when it has at least `LINE_CHARS` characters and occurs once in the corpus
  (a repeated date or a repeated question says nothing about which record was sent).

Rewritten text and prompt text past the trajectory's prompt cap are not counted, so the share is
a lower bound; on corpora over `MATCH_LIMIT` rendered characters no text is aligned (the indexes
would cost memory on every eval) and such runs count only what the code shows.
"""

import bisect
import re
import weakref
from typing import Any

MATCH_CHARS = 32  # shorter runs ("Total", a bare number) say nothing about where they came from
MATCH_LIMIT = 8_000_000  # rendered characters above which text is not aligned to the corpus
LINE_CHARS = 16  # of a line or field matched whole
_SEED = 16  # characters of a seed window
_WORD = re.compile(r"\b\w")
_LINE = re.compile(r"[^\n]+")
_NUMBERING = re.compile(r"^\s*(?:[-*\u2022]\s+|\(?\d{1,7}[.):]\s+|\[\d{1,7}\]\s*|#\d{1,7}:?\s+)")
_FIELD = re.compile(r"[^|\t]+")
_LABEL = re.compile(r"[A-Za-z][\w ]{0,24}:\s+")
_AMBIGUOUS = (-1, -1)


class PageMap:
    """Pages as global indices in corpus order, and their spans in the rendered corpus."""

    def __init__(self, corpus: Any) -> None:
        self.corpus = corpus
        self.names = [d.name for d in corpus.documents]
        self.first: list[int] = []
        total = 0
        for d in corpus.documents:
            self.first.append(total)
            total += d.num_pages
        self.total = total
        self.index = {name: i for i, name in enumerate(self.names)}
        self.length: int = corpus.rendered_chars

    def of(self, doc: Any, page: Any) -> int | None:
        """The global index of (doc, page); None when either is not in the corpus."""
        name = self.corpus.resolve(str(doc))
        d = self.index.get(name) if name is not None else None
        if d is None or isinstance(page, bool) or not isinstance(page, int):
            return None
        count = (self.first[d + 1] if d + 1 < len(self.first) else self.total) - self.first[d]
        return self.first[d] + page - 1 if 1 <= page <= count else None

    def doc(self, g: int) -> int:
        return bisect.bisect_right(self.first, g) - 1

    def start(self, g: int) -> int:
        """Where page `g`'s text begins in the rendered corpus (the end of page g - 1)."""
        if g >= self.total:
            return self.length
        d = self.doc(g)
        return int(self.corpus.page_offset(self.names[d], g - self.first[d] + 1))

    def at(self, offset: int) -> int:
        name, page = self.corpus.locate(offset)
        return self.first[self.index[name]] + int(page) - 1


_SEEDS: "weakref.WeakKeyDictionary[Any, dict[int, int]]" = weakref.WeakKeyDictionary()
_LINES: "weakref.WeakKeyDictionary[Any, dict[str, tuple[int, int]]]" = weakref.WeakKeyDictionary()


def _seeds(corpus: Any) -> dict[int, int]:
    """{hash of the `_SEED` characters at a word start: the first offset they occur at} over
    the rendered corpus, built once per corpus object."""
    seeds = _SEEDS.get(corpus)
    if seeds is None:
        text = corpus.render()
        seeds = {}
        for m in _WORD.finditer(text):
            seeds.setdefault(hash(text[m.start() : m.start() + _SEED]), m.start())
        _SEEDS[corpus] = seeds
    return seeds


def _key(text: str) -> str:
    return " ".join(text.split())


def _fields(line: str, at: int = 0) -> list[tuple[str, int, int]]:
    """`(key, start, end)` of the fields of a record line (none for a line of one field), each
    without its `Label: ` and with its offsets shifted by `at`."""
    found = list(_FIELD.finditer(line))
    if len(found) < 2:
        return []
    out = []
    for m in found:
        text = m.group()
        start = m.start() + len(text) - len(text.lstrip())
        label = _LABEL.match(line, start)
        start = label.end() if label else start
        end = m.start() + len(text.rstrip())
        out.append((_key(line[start:end]), at + start, at + end))
    return out


def _line_index(corpus: Any) -> dict[str, tuple[int, int]]:
    """{normalised line or field: its span in the rendered corpus} for keys of at least
    LINE_CHARS characters; a key found more than once maps to `_AMBIGUOUS`. Built once per
    corpus object."""
    index = _LINES.get(corpus)
    if index is None:
        index = {}
        for m in _LINE.finditer(corpus.render()):
            keys = [(_key(m.group()), m.start(), m.end()), *_fields(m.group(), m.start())]
            for key, a, b in keys:
                if len(key) >= LINE_CHARS:
                    index[key] = _AMBIGUOUS if key in index else (a, b)
        _LINES[corpus] = index
    return index


def _common(a: str, i: int, b: str, j: int) -> int:
    """How many characters `a[i:]` and `b[j:]` share from their start."""
    n, step = 0, 64
    while step:
        if a[i + n : i + n + step] == b[j + n : j + n + step] and i + n + step <= len(a):
            n += step
        else:
            step //= 2
    while i + n < len(a) and j + n < len(b) and a[i + n] == b[j + n]:
        n += 1
    return n


class Looked:
    """What one question's run looked at: page indices and rendered-corpus intervals."""

    def __init__(self, pages: PageMap | None) -> None:
        self.pages = pages
        self.seen: set[int] = set()
        self.spans: list[tuple[int, int]] = []

    def page(self, doc: Any, page: Any, read: bool) -> None:
        if self.pages is None:
            return
        g = self.pages.of(doc, page)
        if g is not None:
            self.seen.add(g)
            if read:
                self.spans.append((self.pages.start(g), self.pages.start(g + 1)))

    def page_range(self, first: int, last: int) -> None:
        """Pages `first`..`last` (global indices), read whole."""
        if self.pages is None or last < first:
            return
        self.seen.update(range(first, last + 1))
        self.spans.append((self.pages.start(first), self.pages.start(last + 1)))

    def chars(self, a: int, b: int) -> None:
        """Characters `a:b` of the rendered corpus (a slice of `context`)."""
        if self.pages is None or b <= a:
            return
        self.seen.update(range(self.pages.at(a), self.pages.at(b - 1) + 1))
        self.spans.append((a, b))

    def matched(self, texts: list[str]) -> None:
        """Corpus text found in `texts`, verbatim or line by line (see the module docstring)."""
        if self.pages is None or not texts or self.pages.length > MATCH_LIMIT:
            return
        self._verbatim(texts)
        self._lines(texts)

    def _verbatim(self, texts: list[str]) -> None:
        assert self.pages is not None
        corpus = self.pages.corpus.render()
        seeds = _seeds(self.pages.corpus)
        for text in texts:
            pos = 0
            for m in _WORD.finditer(text):
                j = m.start()
                if j < pos:
                    continue
                i = seeds.get(hash(text[j : j + _SEED]))
                if i is None:
                    continue
                n = _common(text, j, corpus, i)
                if n >= MATCH_CHARS:
                    self.chars(i, i + n)
                    pos = j + n

    def _lines(self, texts: list[str]) -> None:
        assert self.pages is not None
        index = _line_index(self.pages.corpus)
        for text in texts:
            for m in _LINE.finditer(text):
                line = _NUMBERING.sub("", m.group(), count=1)
                span = index.get(_key(line))
                if span is not None:
                    if span != _AMBIGUOUS:
                        self.chars(*span)
                    continue
                for key, _, _ in _fields(line):
                    span = index.get(key)
                    if span is not None and span != _AMBIGUOUS:
                        self.chars(*span)

    def share(self) -> float:
        if self.pages is None or not self.pages.length:
            return 0.0
        covered, end = 0, 0
        for a, b in sorted(self.spans):
            a = max(a, end)
            if b > a:
                covered += b - a
                end = b
        return round(covered / self.pages.length, 6)

    def docs(self) -> int:
        if self.pages is None:
            return 0
        return len({self.pages.doc(g) for g in self.seen})
