"""Per-page JSON list: `["page 1 markdown", "page 2 markdown", ...]` (one file per document)."""

from pathlib import Path

from rlm_docs.corpus.document import Document
from rlm_docs.errors import IngestError
from rlm_docs.ingest.source import ReadResult, document_name, page_list, warn_empty_pages


def read_page_list(path: Path, data: object, warnings: list[str]) -> ReadResult:
    if not isinstance(data, list):
        raise IngestError(f"{path}: expected a JSON list of page strings")
    pages = page_list(path, data)
    warn_empty_pages(path, pages, warnings)
    return ReadResult([Document(document_name(path), pages, str(path))], "pages", warnings)
