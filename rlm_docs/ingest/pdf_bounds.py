"""How much text a PDF may make ingest extract: bounds per page and per document.

A PDF is a program for drawing pages, and a small file can describe a great deal of text: a
6.9 KB file whose 10 pages share one compressed 5,000,000-character content stream made pypdf
work for 96 s and 2.1 GB. Extraction time grows with the decoded content it walks (about 2.4 µs
per byte here), so the bounds are checked on the decoded content streams *before* a page is
extracted (a stream shared by several pages counts once per page, since each page walks it
again), and on the text that comes out (also for OCR output). Past a bound, ingest stops with
one line naming the file and page; the limits and their reasons are in `docs/limits.md`.
"""

from pathlib import Path
from typing import Any

from rlm_docs.errors import IngestError

MAX_PAGE_CHARS = 200_000  # extracted text of one page; a dense printed page has under 10,000
MAX_DOCUMENT_CHARS = 20_000_000  # extracted text of one PDF: 100x a long annual report
MAX_PAGE_CONTENT_BYTES = 2_000_000  # decoded drawing instructions of one page, its forms too
MAX_DOCUMENT_CONTENT_BYTES = 64_000_000  # the same over every page: ~2.5 min of pypdf at most


class Meter:
    """Decoded content bytes and extracted characters of each page, checked against the bounds
    as pages are met."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.total = 0
        self.chars = 0
        self._sizes: dict[Any, int] = {}  # decoded size of each stream object, decoded once

    def _size(self, ref: Any) -> int:
        key = (ref.idnum, ref.generation) if hasattr(ref, "idnum") else id(ref)
        if key not in self._sizes:
            obj = ref.get_object()
            self._sizes[key] = len(obj.get_data()) if hasattr(obj, "get_data") else 0
        return self._sizes[key]

    def _streams(self, page: Any) -> list[Any]:
        """The page's content streams and the form XObjects its resources name."""
        contents = page.get("/Contents")
        items = contents.get_object() if contents is not None else []
        streams = list(items) if isinstance(items, list) else [contents]
        resources = page.get("/Resources")
        xobjects = resources.get_object().get("/XObject") if resources is not None else None
        for ref in (xobjects.get_object() if xobjects is not None else {}).values():
            if ref.get_object().get("/Subtype") == "/Form":
                streams.append(ref)
        return streams

    def content(self, number: int, page: Any) -> None:
        """IngestError when page `number` or the pages so far are over the content bounds."""
        size = sum(self._size(ref) for ref in self._streams(page))
        self.total += size
        if size > MAX_PAGE_CONTENT_BYTES:
            raise IngestError(
                f"{self.path}: page {number}: {size:,} bytes of page content is over the limit "
                f"of {MAX_PAGE_CONTENT_BYTES:,} (see docs/limits.md)"
            )
        if self.total > MAX_DOCUMENT_CONTENT_BYTES:
            raise IngestError(
                f"{self.path}: pages 1-{number} hold {self.total:,} bytes of page content, over "
                f"the limit of {MAX_DOCUMENT_CONTENT_BYTES:,} per document (see docs/limits.md)"
            )

    def text(self, number: int, text: str) -> None:
        """IngestError when page `number`'s text or the text so far is over the text bounds."""
        self.chars += len(text)
        if len(text) > MAX_PAGE_CHARS:
            raise IngestError(
                f"{self.path}: page {number}: {len(text):,} characters of text is over the "
                f"limit of {MAX_PAGE_CHARS:,} per page (see docs/limits.md)"
            )
        if self.chars > MAX_DOCUMENT_CHARS:
            raise IngestError(
                f"{self.path}: pages 1-{number} hold {self.chars:,} characters of text, over "
                f"the limit of {MAX_DOCUMENT_CHARS:,} per document (see docs/limits.md)"
            )


def check_text(path: Path, pages: list[str]) -> None:
    """IngestError when a page's or the document's text (e.g. from OCR) is over the bounds."""
    meter = Meter(path)
    for number, text in enumerate(pages, 1):
        meter.text(number, text)
