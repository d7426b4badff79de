"""Ingest: read source files (OCR JSON, markdown, page lists, pdftotext, marked text, PDFs)
into documents and write the corpus store."""

from rlm_docs.ingest.detect import read_source
from rlm_docs.ingest.pipeline import IngestReport, discover, ingest
from rlm_docs.ingest.source import FORMATS, OCR_MODES, Options, ReadResult

__all__ = [
    "FORMATS",
    "OCR_MODES",
    "IngestReport",
    "Options",
    "ReadResult",
    "discover",
    "ingest",
    "read_source",
]
