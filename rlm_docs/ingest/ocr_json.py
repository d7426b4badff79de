"""Mistral OCR responses (`client.ocr.process(...)` as JSON): one file per document.

Shape: `{"pages": [{"index": 0, "markdown": "...", "images": [...], "tables": [...],
"dimensions": {...}}, ...], "model": ..., "usage_info": ...}`. `index` is 0-based, so page
`index + 1` of the document is `markdown`. When OCR ran with `table_format`, tables come back
separately and the markdown holds `[tbl-0.md](tbl-0.md)` links; those links are replaced by the
table content so the page reads as one text, in one pass over the page's own markdown: a link
inside a table's content stays a link (no recursion, so no exponential expansion). Images stay
as markdown image references; page `header`/`footer` fields (only present when extraction was
requested) are not added.

Pages listed out of order are sorted, with a warning. A missing or duplicated index is an error
naming the page: filling a gap would shift no numbers but would silently hide a lost page. A
hostile `"index": 3000000000` costs nothing: gaps are counted from the sorted indices, never
by building the range they span.
"""

import re
from pathlib import Path
from typing import Any, TypeGuard

from rlm_docs.corpus.document import Document
from rlm_docs.errors import IngestError
from rlm_docs.ingest.source import ReadResult, document_name, warn_empty_pages


def is_ocr_response(data: object) -> TypeGuard[dict[str, Any]]:
    return isinstance(data, dict) and isinstance(data.get("pages"), list)


_LINK = re.compile(r"\[([^\[\]()\n]{1,200})\]\(\1\)")


def _page_markdown(path: Path, n: int, page: dict) -> str:
    text = page.get("markdown")
    if not isinstance(text, str):
        raise IngestError(f"{path}: page {n}: 'markdown' is missing or not a string")
    tables = page.get("tables")
    contents = {
        t["id"]: str(t.get("content", ""))
        for t in (tables if isinstance(tables, list) else [])
        if isinstance(t, dict) and isinstance(t.get("id"), str)
    }
    if not contents:
        return text
    return _LINK.sub(lambda m: contents.get(m.group(1), m.group(0)), text)


def _gaps(indices: list[int], show: int = 10) -> tuple[list[int], int]:
    """(first `show` missing page numbers, how many are missing) below the largest of the
    sorted, distinct 0-based `indices`, in time linear in their number, not their size."""
    shown: list[int] = []
    total, expected = 0, 0
    for index in indices:
        if index > expected:
            total += index - expected
            room = show - len(shown)
            shown.extend(n + 1 for n in range(expected, min(index, expected + max(room, 0))))
        expected = index + 1
    return shown, total


def ocr_pages(path: Path, data: object, warnings: list[str]) -> list[str]:
    """Page texts (page 1 first) of an OCR response; IngestError naming the file and page."""
    if not is_ocr_response(data):
        raise IngestError(
            f"{path}: JSON is not a Mistral OCR response (expected an object with a 'pages' "
            "list of {index, markdown}) nor a list of page strings"
        )
    entries = data["pages"]
    if not entries:
        raise IngestError(f"{path}: OCR response has no pages")
    indexed: list[tuple[int, dict]] = []
    for i, page in enumerate(entries):
        index = page.get("index") if isinstance(page, dict) else None
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise IngestError(f"{path}: pages[{i}] has no valid 0-based 'index'")
        indexed.append((index, page))
    if any(a[0] > b[0] for a, b in zip(indexed, indexed[1:], strict=False)):
        warnings.append(f"{path}: OCR pages are out of order; sorted by index")
        indexed.sort(key=lambda item: item[0])
    seen: set[int] = set()
    for index, _ in indexed:
        if index in seen:
            raise IngestError(f"{path}: page {index + 1} (index {index}) appears twice")
        seen.add(index)
    shown, total = _gaps([index for index, _ in indexed])
    if total:
        more = f" ({total:,} in all, {len(indexed):,} listed)" if total > len(shown) else ""
        raise IngestError(
            f"{path}: OCR response is missing page(s) {', '.join(map(str, shown))}{more}"
        )
    return [_page_markdown(path, index + 1, page) for index, page in indexed]


def read_ocr_json(path: Path, data: object, warnings: list[str]) -> ReadResult:
    pages = ocr_pages(path, data, warnings)
    warn_empty_pages(path, pages, warnings)
    return ReadResult([Document(document_name(path), pages, str(path))], "ocr", warnings)
