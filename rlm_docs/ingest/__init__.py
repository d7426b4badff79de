"""Ingest: read source files (OCR JSON, markdown, page lists, pdftotext, marked text, PDFs)
into documents and write the corpus store.

Names are imported lazily so the CLI can read `formats` without loading pyarrow.
"""

from importlib import import_module
from typing import Any

_EXPORTS = {
    "FORMATS": "rlm_docs.ingest.formats",
    "OCR_MODES": "rlm_docs.ingest.formats",
    "IngestReport": "rlm_docs.ingest.pipeline",
    "discover": "rlm_docs.ingest.pipeline",
    "ingest": "rlm_docs.ingest.pipeline",
    "read_source": "rlm_docs.ingest.detect",
    "Options": "rlm_docs.ingest.source",
    "ReadResult": "rlm_docs.ingest.source",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'rlm_docs.ingest' has no attribute {name!r}")
