"""PDFs: Mistral OCR when a key is configured (or a cached response exists), otherwise the
pypdf text layer, as chosen by `--ocr auto|mistral|local`.

With `auto`, an OCR service that cannot be reached (network down, wrong MISTRAL_BASE_URL) is
not fatal: the text layer is used and a warning says so. A PDF without any text layer needs
OCR, and the error says how to ask for it."""

from pathlib import Path

from rlm_docs.corpus.document import Document
from rlm_docs.errors import IngestError
from rlm_docs.ingest import mistral_ocr
from rlm_docs.ingest.ocr_json import ocr_pages
from rlm_docs.ingest.pdf_text import pdf_text_pages
from rlm_docs.ingest.source import ReadResult, document_name, warn_empty_pages


def read_pdf(path: Path, data: bytes, digest: str, mode: str, warnings: list[str]) -> ReadResult:
    if not data.startswith(b"%PDF-"):
        raise IngestError(f"{path}: not a PDF (no %PDF- header)")
    use_ocr = mode == "mistral" or (
        mode == "auto"
        and (mistral_ocr.api_key() is not None or mistral_ocr.cached_response(digest) is not None)
    )
    response = None
    if use_ocr:
        try:
            response = mistral_ocr.ocr_pdf(path, data, digest)
        except mistral_ocr.OcrUnreachable as exc:
            if mode != "auto":
                raise
            warnings.append(f"{exc}; used the PDF's text layer (pypdf) instead")
    if response is not None:
        pages, reader = ocr_pages(path, response, warnings), "mistral-ocr"
    else:
        if mode == "auto" and not use_ocr:
            warnings.append(
                f"{path}: {mistral_ocr.ENV_KEY} not set; used the PDF's text layer (pypdf), "
                "which is empty for scanned pages"
            )
        pages, reader = pdf_text_pages(path, data, warnings), "pypdf"
        if not any(p.strip() for p in pages):
            raise IngestError(
                f"{path}: none of its {len(pages)} page(s) has a text layer (a scanned or "
                f"image-only PDF); read it with --ocr mistral (needs {mistral_ocr.ENV_KEY})"
            )
    warn_empty_pages(path, pages, warnings)
    return ReadResult([Document(document_name(path), pages, str(path))], reader, warnings)
