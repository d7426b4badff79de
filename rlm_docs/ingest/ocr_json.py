"""Mistral OCR responses (`client.ocr.process(...)` as JSON): one file per document.

Shape: `{"pages": [{"index": 0, "markdown": "...", "images": [...], "tables": [...],
"dimensions": {...}}, ...], "model": ..., "usage_info": ...}`. `index` is 0-based, so page
`index + 1` of the document is `markdown`. When OCR ran with `table_format`, tables come back
separately and the markdown holds `[tbl-0.md](tbl-0.md)` links; those links are replaced by the
table content so the page reads as one text. Images stay as markdown image references; page
`header`/`footer` fields (only present when extraction was requested) are not added.

Pages listed out of order are sorted, with a warning. A missing or duplicated index is an error
naming the page: filling a gap would shift no numbers but would silently hide a lost page.
"""

from pathlib import Path

from rlm_docs.corpus.document import Document
from rlm_docs.errors import IngestError
from rlm_docs.ingest.source import ReadResult, document_name, warn_empty_pages


def is_ocr_response(data: object) -> bool:
    return isinstance(data, dict) and isinstance(data.get("pages"), list)


def _page_markdown(path: Path, n: int, page: dict) -> str:
    text = page.get("markdown")
    if not isinstance(text, str):
        raise IngestError(f"{path}: page {n}: 'markdown' is missing or not a string")
    for table in page.get("tables") or []:
        if isinstance(table, dict) and isinstance(table.get("id"), str):
            tid = table["id"]
            text = text.replace(f"[{tid}]({tid})", str(table.get("content", "")))
    return text


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
    missing = sorted(set(range(indexed[-1][0] + 1)) - seen)
    if missing:
        shown = ", ".join(str(m + 1) for m in missing[:10])
        raise IngestError(f"{path}: OCR response is missing page(s) {shown}")
    return [_page_markdown(path, index + 1, page) for index, page in indexed]


def read_ocr_json(path: Path, data: object, warnings: list[str]) -> ReadResult:
    pages = ocr_pages(path, data, warnings)
    warn_empty_pages(path, pages, warnings)
    return ReadResult([Document(document_name(path), pages, str(path))], "ocr", warnings)
