"""`Corpus`: read-only access to documents and pages, the rendered context, and page search.

A corpus is either loaded from a store directory (`Corpus.load`, memory-mapped Parquet) or
built in memory (`Corpus.from_documents`). Both share one representation: a documents table
and a pages table in corpus order, so page `n` of document `d` is row `first[d] + n - 1`.
"""

import difflib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePath
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rlm_docs.corpus import render as _render
from rlm_docs.corpus import store
from rlm_docs.corpus.document import DocInfo, Document, Hit
from rlm_docs.corpus.metadata import normalise
from rlm_docs.errors import CorpusError

if TYPE_CHECKING:
    from rlm_docs.corpus.search import Ranking, Searcher

DocumentsLike = Mapping[str, Sequence[str]] | Iterable[Document]


class Corpus:
    """An ordered set of documents, each an ordered list of 1-based pages."""

    def __init__(
        self,
        documents: pa.Table,
        pages: pa.Table,
        path: Path | None = None,
        manifest: dict | None = None,
    ) -> None:
        self.path = path
        self.manifest = manifest or {}
        self._docs = documents
        self._pages = pages
        self._names: list[str] = documents.column("name").to_pylist()
        self._counts = int64s(documents.column("num_pages"))
        self._first = np.concatenate([[0], np.cumsum(self._counts)[:-1]]).astype(np.int64)
        self._index = {n: i for i, n in enumerate(self._names)}
        self._lower: dict[str, str] = {}
        for n in self._names:
            self._lower.setdefault(n.lower(), n)
        self._text = pages.column("text")
        self._meta: list[dict[str, object]] | None = None
        self._infos: tuple[DocInfo, ...] | None = None
        self._rendered: str | None = None
        self._starts: np.ndarray | None = None
        self._length = 0
        self._searcher: Searcher | None = None

    @classmethod
    def load(cls, path: str | Path) -> "Corpus":
        """Open the store directory at `path` (CorpusError if it is not a valid store)."""
        root = Path(path)
        manifest = store.read_manifest(root)
        documents, pages = store.read_tables(root)
        if pages.num_rows != int(pc.sum(documents.column("num_pages")).as_py() or 0):
            raise CorpusError(f"{root}: pages table does not match the documents table")
        return cls(documents, pages, root, manifest)

    @classmethod
    def from_documents(cls, docs: DocumentsLike) -> "Corpus":
        """An in-memory corpus from `{name: [page, ...]}` or `Document`s (token counts are
        computed here; search builds its index on first use)."""
        items = (
            [Document(str(k), list(v)) for k, v in docs.items()]
            if isinstance(docs, Mapping)
            else list(docs)
        )
        for d in items:
            if not all(isinstance(p, str) for p in d.pages):
                raise CorpusError(f"document {d.name!r}: every page must be a string")
        store.fill_tokens(items)
        documents, pages = store.build_tables(items)
        return cls(documents, pages)

    def save(self, path: str | Path) -> Path:
        """Write this corpus as a store at `path` (atomically) and return the path."""
        docs = [self.document(name) for name in self._names]
        return store.write_store(path, docs, {"sources": [], "warnings": []})

    def document(self, name: str) -> Document:
        """One document with all its pages and their stored token counts."""
        d = self._doc(name)
        a, n = int(self._first[d]), int(self._counts[d])
        return Document(
            self._names[d],
            self._text.slice(a, n).to_pylist(),
            self._docs.column("source")[d].as_py(),
            self._pages.column("tokens").slice(a, n).to_pylist(),
            dict(self.metadata[d]),
        )

    # -- documents -----------------------------------------------------------------------

    @property
    def names(self) -> list[str]:
        return list(self._names)

    @property
    def metadata(self) -> list[dict[str, object]]:
        """Each document's metadata row in corpus order ({} when none was given at ingest);
        parsed once, treat as read-only."""
        if self._meta is None:
            self._meta = [_parse_meta(m) for m in self._docs.column("meta").to_pylist()]
        return self._meta

    @property
    def documents(self) -> list[DocInfo]:
        """Every document's `DocInfo`, in corpus order. Built once: normalising the metadata of
        a few hundred filings costs tens of milliseconds, and every question's root prompt
        lists the documents (a new list each call; the DocInfos are frozen)."""
        if self._infos is None:
            cols = [self._docs.column(c).to_pylist() for c in store.DOCUMENTS_SCHEMA.names[:-1]]
            self._infos = tuple(
                DocInfo(name, pages, chars, tokens, source, dict(meta), *normalise(meta))
                for (name, pages, chars, tokens, source), meta in zip(
                    zip(*cols, strict=True), self.metadata, strict=True
                )
            )
        return list(self._infos)

    @property
    def total_pages(self) -> int:
        return int(self._counts.sum())

    @property
    def total_tokens(self) -> int:
        return int(pc.sum(self._docs.column("tokens")).as_py() or 0)

    @property
    def total_chars(self) -> int:
        return int(pc.sum(self._docs.column("chars")).as_py() or 0)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.resolve(name) is not None

    def __repr__(self) -> str:
        where = f" at {self.path}" if self.path else ""
        return f"<Corpus{where}: {len(self)} documents, {self.total_pages} pages>"

    def resolve(self, name: str) -> str | None:
        """The document called `name`, matched exactly, then case-insensitively, then by the
        stem of a file name or path (`reports/3M_2018_10K.pdf` → `3M_2018_10K`)."""
        if name in self._index:
            return name
        hit = self._lower.get(name.lower())
        if hit is not None:
            return hit
        stem = PurePath(name.replace("\\", "/")).stem
        if stem.endswith(".pages"):
            stem = stem[: -len(".pages")]
        return self._lower.get(stem.lower())

    def _doc(self, name: str) -> int:
        resolved = self.resolve(name) if isinstance(name, str) else None
        if resolved is None:
            close = difflib.get_close_matches(str(name), self._names, n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
            raise CorpusError(f"unknown document {name!r}{hint}")
        return self._index[resolved]

    def num_pages(self, doc: str) -> int:
        return int(self._counts[self._doc(doc)])

    # -- pages ---------------------------------------------------------------------------

    def _row(self, d: int, page: int) -> int:
        n = int(self._counts[d])
        if isinstance(page, bool) or not isinstance(page, int | np.integer) or not 1 <= page <= n:
            raise CorpusError(
                f"document {self._names[d]!r} has no page {page!r} (valid pages: 1-{n})"
            )
        return int(self._first[d]) + int(page) - 1

    def page(self, doc: str, n: int) -> str:
        """Text of page `n` (1-based) of `doc`."""
        d = self._doc(doc)
        return self._text[self._row(d, n)].as_py()

    def pages(self, doc: str, start: int, end: int) -> list[str]:
        """Texts of pages `start`..`end` (inclusive, 1-based) of `doc`."""
        d = self._doc(doc)
        a, b = self._row(d, start), self._row(d, end)
        if b < a:
            raise CorpusError(f"document {self._names[d]!r}: page range {start}-{end} is empty")
        return self._text.slice(a, b - a + 1).to_pylist()

    def page_tokens(self, doc: str, n: int) -> int:
        """cl100k_base token count of one page (stored at ingest)."""
        d = self._doc(doc)
        return int(self._pages.column("tokens")[self._row(d, n)].as_py())

    # -- rendered context ----------------------------------------------------------------

    def _layout(self) -> np.ndarray:
        if self._starts is None:
            chars = int64s(self._pages.column("chars"))
            self._starts, self._length = _render.page_starts(self._names, self._counts, chars)
        return self._starts

    def render(self) -> str:
        """The whole corpus in the marked MADQA form (see `rlm_docs.corpus.render`), cached."""
        if self._rendered is None:
            self._rendered = _render.render_documents(
                self._names, self._counts.tolist(), self._text.to_pylist()
            )
        return self._rendered

    @property
    def rendered_chars(self) -> int:
        """`len(self.render())`, computed from page sizes without rendering (the `context`
        length the madqa prompt states; `total_chars` counts page text only)."""
        self._layout()
        return self._length

    def page_offset(self, doc: str, n: int) -> int:
        """Offset in `render()` where page `n` of `doc` begins (its `[PAGE n]` marker, or the
        `[FILE:` header for page 1)."""
        return int(self._layout()[self._row(self._doc(doc), n)])

    def locate(self, offset: int) -> tuple[str, int]:
        """The (document, page) that character `offset` of `render()` belongs to; O(log n)."""
        starts = self._layout()
        if not isinstance(offset, int | np.integer) or not 0 <= offset < self._length:
            raise CorpusError(
                f"offset {offset!r} is outside the rendered corpus (0-{self._length - 1})"
            )
        row = int(np.searchsorted(starts, offset, side="right")) - 1
        d = int(np.searchsorted(self._first, row, side="right")) - 1
        return self._names[d], row - int(self._first[d]) + 1

    # -- search --------------------------------------------------------------------------

    def search(
        self,
        query: str,
        k: int = 5,
        document: str | Sequence[str] | None = None,
        boost_names: bool = True,
        ranking: "Ranking | None" = None,
        ranker: str | None = None,
    ) -> list[Hit]:
        """Top-`k` pages for `query` by BM25 plus what the corpus's ranker adds (see
        `rlm_docs.corpus.search`; for SEC filings, boosts for the filing and the statement the
        query names; `boost_names=False` drops the filing boost, `ranking` overrides the
        weights, `ranker` names the ranker, `generic` or `sec`, instead of `self.ranker`),
        optionally restricted to one `document` or a list of them."""
        from rlm_docs.corpus.search import Searcher

        only: int | list[int] | None = None
        if isinstance(document, str):
            only = self._doc(document)
        elif document is not None:
            only = [self._doc(d) for d in document]
        if not self.total_pages:
            return []
        if self._searcher is None:
            self._searcher = Searcher.open(self)
        return self._searcher.search(
            query, k=k, document=only, boost_names=boost_names, ranking=ranking, ranker=ranker
        )

    @property
    def ranker(self) -> str:
        """The ranker `search` uses by default: the one the store's manifest names, else `sec`
        when most documents are SEC filings (by metadata `doc_type`, else by name), else
        `generic` (`rlm_docs.corpus.search.ranker_name`)."""
        from rlm_docs.corpus.search import ranker_name

        return ranker_name(self)


def _parse_meta(text: str | None) -> dict[str, object]:
    """A stored metadata cell as a dict ({} for none or anything that is not a JSON object)."""
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def int64s(column: pa.ChunkedArray) -> np.ndarray:
    """An integer column as int64, read from its Arrow buffers. pyarrow's own conversions to
    numpy import pandas on first use (about a quarter of a second, in every fork server and
    CLI command that loads a store) to check for pandas types; a column with nulls (not one a
    store written here holds) still goes through them."""
    if column.null_count or not pa.types.is_integer(column.type):
        return np.asarray(column, dtype=np.int64)
    dtype = np.dtype(str(column.type))  # "int32" names the same type in both
    parts = [
        np.frombuffer(
            chunk.buffers()[1], dtype=dtype, count=len(chunk), offset=chunk.offset * dtype.itemsize
        )
        for chunk in column.chunks
    ]
    return np.concatenate(parts or [np.zeros(0, dtype)]).astype(np.int64)
