"""PDFs, as chosen by `--ocr auto|mistral|local`: Mistral OCR (`mistral`, or `auto` when a key
is configured or a cached response exists), else the pypdf text layer with local OCR
(Tesseract) for the pages that have no text layer (`local`, and `auto` without a key).

With `auto`, an OCR service that cannot be reached (network down, wrong MISTRAL_BASE_URL) is
not fatal: the local reading is used and a warning says so. Without Tesseract installed,
pages without a text layer come out empty (with a warning that says how to install it), and a
PDF without any text layer is an error that names both ways to read it."""

import re
from pathlib import Path

from rlm_docs.corpus.document import Document
from rlm_docs.errors import IngestError
from rlm_docs.ingest import mistral_ocr, tesseract_ocr
from rlm_docs.ingest.ocr_json import ocr_pages
from rlm_docs.ingest.pdf_bounds import check_text
from rlm_docs.ingest.pdf_text import pdf_text_pages
from rlm_docs.ingest.source import ReadResult, document_name, warn_empty_pages

_BLANK = re.compile(r"\s*")


def read_pdf(path: Path, data: bytes, digest: str, mode: str, warnings: list[str]) -> ReadResult:
    if not data.startswith(b"%PDF-"):
        raise IngestError(f"{path}: not a PDF (no %PDF- header)")
    use_mistral = mode == "mistral" or (
        mode == "auto"
        and (mistral_ocr.api_key() is not None or mistral_ocr.cached_response(digest) is not None)
    )
    response = None
    if use_mistral:
        try:
            response = mistral_ocr.ocr_pdf(path, data, digest)
        except mistral_ocr.OcrUnreachable as exc:
            if mode != "auto":
                raise
            warnings.append(f"{exc}; read the PDF locally instead")
    if response is not None:
        pages, reader = ocr_pages(path, response, warnings), "mistral-ocr"
    else:
        if mode == "auto" and not use_mistral:
            warnings.append(
                f"{path}: {mistral_ocr.ENV_KEY} not set; read the PDF's text layer (pypdf), "
                "with local OCR (Tesseract) for pages that have none"
            )
        pages, reader = _local(path, data, digest, warnings)
    check_text(path, pages)  # OCR text too (the text layer was checked page by page)
    warn_empty_pages(path, pages, warnings)
    return ReadResult([Document(document_name(path), pages, str(path))], reader, warnings)


def _local(path: Path, data: bytes, digest: str, warnings: list[str]) -> tuple[list[str], str]:
    """(pages, reader): the text layer, and Tesseract's text for the pages without one."""
    pages = pdf_text_pages(path, data, warnings)
    bare = [i for i, p in enumerate(pages) if _BLANK.fullmatch(p)]
    if not bare:
        return pages, "pypdf"
    try:
        texts = tesseract_ocr.ocr_pages(path, data, digest, bare)
    except tesseract_ocr.TesseractMissing:
        if len(bare) == len(pages):
            raise IngestError(
                f"{path}: none of its {len(pages)} page(s) has a text layer (a scanned or "
                f"image-only PDF); {tesseract_ocr.INSTALL_HINT} for --ocr local, or use "
                f"--ocr mistral (needs {mistral_ocr.ENV_KEY})"
            ) from None
        warnings.append(
            f"{path}: {len(bare)} page(s) without a text layer not OCR'd "
            f"({tesseract_ocr.INSTALL_HINT})"
        )
        return pages, "pypdf"
    found = {i: t for i, t in texts.items() if not _BLANK.fullmatch(t)}
    pages = [found.get(i, p) for i, p in enumerate(pages)]
    return pages, "pypdf+tesseract" if found else "pypdf"
