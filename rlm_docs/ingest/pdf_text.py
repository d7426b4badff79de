"""Born-digital PDFs offline: the text layer, page by page, with pypdf.

No OCR happens here: a scanned page has no text layer and comes out empty; `pdf.py` hands
such pages to Tesseract (`tesseract_ocr.py`). Each page's content is measured before it is
extracted, and its text after (`pdf_bounds`): a small PDF can hold far more text than a host
should extract.
"""

import io
from pathlib import Path

from pypdf import PdfReader
from pypdf.errors import PyPdfError

from rlm_docs.errors import IngestError
from rlm_docs.ingest.pdf_bounds import Meter


def pdf_text_pages(path: Path, data: bytes, warnings: list[str]) -> list[str]:
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise IngestError(f"{path}: PDF is encrypted")
        pages: list[str] = []
        meter = Meter(path)
        for i, page in enumerate(reader.pages, 1):
            meter.content(i, page)
            try:
                pages.append(page.extract_text() or "")
            except (PyPdfError, ValueError, KeyError, TypeError) as exc:
                warnings.append(f"{path}: page {i}: no text extracted ({exc})")
                pages.append("")
            meter.text(i, pages[-1])
    except (PyPdfError, ValueError, KeyError, TypeError, OSError) as exc:
        raise IngestError(f"{path}: not a readable PDF ({exc})") from None
    if not pages:
        raise IngestError(f"{path}: PDF has no pages")
    return pages
