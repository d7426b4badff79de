"""Fitting a corpus to a token window: the largest page-aligned prefix of the rendered corpus
(`long-context`) and fixed page-aligned chunks (`map-reduce`).

Both cut at page boundaries so every page a model sees is whole and labelled with its file and
page (citations stay checkable), and both size pages from the token counts stored at ingest, so
a 50M-token corpus is planned without tokenizing it; only the text actually sent is counted.
"""

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from rlm_docs.corpus.render import page_block
from rlm_docs.tokens import count_tokens, encode, encoding

# Tokens of the markers around a page in the rendered corpus ([PAGE n] ... [END PAGE n], plus a
# file header for a first page), an upper bound used for planning; the prefix is then counted.
PAGE_MARKER_TOKENS = 16
TRUNCATION_NOTE = "[... corpus truncated here: the rest does not fit in the context window ...]"


@dataclass(frozen=True)
class Prefix:
    """The part of the rendered corpus that fits, and what was left out."""

    text: str
    tokens: int
    pages: int
    total_pages: int
    last: dict[str, Any] | None
    truncated_by: str | None = None  # "tokens" or "chars": which limit cut the corpus

    @property
    def truncated(self) -> bool:
        return self.pages < self.total_pages


@dataclass
class Chunk:
    """Consecutive pages (as labelled page blocks); `tokens` is their planned size."""

    text: str = ""
    tokens: int = 0
    pages: list[dict[str, Any]] = field(default_factory=list)

    @property
    def label(self) -> str:
        """`DOC p.A-B` for the chunk's first and last page (documents may differ)."""
        if not self.pages:
            return "(empty)"
        a, b = self.pages[0], self.pages[-1]
        if a["file"] == b["file"]:
            return f"{a['file']} p.{a['page']}-{b['page']}"
        return f"{a['file']} p.{a['page']} - {b['file']} p.{b['page']}"


def _pages(corpus: Any) -> Iterator[tuple[str, int, int]]:
    for info in corpus.documents:
        for n in range(1, info.num_pages + 1):
            yield info.name, n, corpus.page_tokens(info.name, n)


def _render_prefix(corpus: Any, order: list[tuple[str, int]], kept: int) -> str:
    """`corpus.render()` up to (not including) page `order[kept]`, then the truncation note."""
    if kept >= len(order):
        return corpus.render()
    end = corpus.page_offset(*order[kept])
    return corpus.render()[:end].rstrip("\n") + "\n" + TRUNCATION_NOTE + "\n"


def fit_prefix(corpus: Any, available: int, max_chars: int | None = None) -> Prefix:
    """The largest page-aligned prefix of `corpus.render()` of at most `available` tokens (and
    `max_chars` characters, when given).

    The whole corpus is returned unchanged when it fits; otherwise the prefix ends after the
    last page that fits, followed by `TRUNCATION_NOTE` so the model knows text is missing.
    """
    sizes = list(_pages(corpus))
    order = [(name, n) for name, n, _ in sizes]
    kept = used = 0
    for _, n, tokens in sizes:
        cost = tokens + PAGE_MARKER_TOKENS + (PAGE_MARKER_TOKENS if n == 1 else 0)
        if used + cost > available:
            break
        kept += 1
        used += cost
    text = _render_prefix(corpus, order, kept)
    tokens = count_tokens(text)
    by = "tokens"
    if max_chars is not None and len(text) > max_chars:
        # a page's block ends where the next one begins: keep the pages ending within the cap
        room = max_chars - len(TRUNCATION_NOTE) - 2
        whole = len(corpus.render())
        ends = [
            corpus.page_offset(*order[i + 1]) if i + 1 < len(order) else whole for i in range(kept)
        ]
        kept, by = sum(1 for end in ends if end <= room), "chars"
        text = _render_prefix(corpus, order, kept)
        tokens = count_tokens(text)
    while kept and tokens > available:  # the plan is an estimate; the count is exact
        kept, by = kept - 1, "tokens"
        text = _render_prefix(corpus, order, kept)
        tokens = count_tokens(text)
    last = {"file": order[kept - 1][0], "page": order[kept - 1][1]} if kept else None
    truncated_by = by if kept < len(order) else None
    return Prefix(text, tokens, kept, len(order), last, truncated_by)


def _split(text: str, limit: int) -> list[tuple[str, int]]:
    """`text` cut into pieces of at most `limit` tokens, with their token counts (for a page
    larger than a chunk)."""
    ids = encode(text)
    steps = range(0, max(len(ids), 1), limit)
    return [(encoding().decode(ids[i : i + limit]), len(ids[i : i + limit])) for i in steps]


def chunk_pages(corpus: Any, chunk_tokens: int) -> list[Chunk]:
    """Consecutive page blocks grouped into chunks of at most `chunk_tokens` tokens, in corpus
    order; a page larger than a chunk is split into several chunks of its own. A block's size
    is its stored page count plus its label's exact count, so the corpus is not re-tokenized."""
    chunks: list[Chunk] = []
    current = Chunk()
    for name, n, tokens in _pages(corpus):
        label = count_tokens(page_block(name, n, "", 0)) + 2  # + the blank line between blocks
        body = corpus.page(name, n)
        pieces = [(body, tokens)]
        if tokens + label > chunk_tokens:
            pieces = _split(body, max(chunk_tokens - label, 1))
        for piece, size in pieces:
            if current.pages and current.tokens + size + label > chunk_tokens:
                chunks.append(current)
                current = Chunk()
            block = page_block(name, n, piece, len(piece))
            current.text += ("\n\n" if current.text else "") + block
            current.tokens += size + label
            current.pages.append({"file": name, "page": n})
    if current.pages:
        chunks.append(current)
    return chunks
