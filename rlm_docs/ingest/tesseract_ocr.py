"""Local OCR of scanned PDF pages with Tesseract, an open engine from the system's packages
(`apt-get install tesseract-ocr`), so a scanned PDF needs neither a key nor the network.

Pages are rendered with pypdfium2 (PDFium, shipped inside its wheel) and read by the
`tesseract` binary through pytesseract. Only the pages that have no text layer are OCR'd: a
born-digital page's own text is exact, and OCR'ing it would only add errors and minutes.
Results are cached beside Mistral OCR's, as `home_dir()/ocr/<sha256>.tesseract-<lang>.json`
(pages by 0-based index, the engine version), so a PDF is OCR'd once per language whichever
corpus it goes into. A page is rendered at 300 dpi, or smaller when that would exceed
`MAX_PIXELS`: a hostile page size must not turn into a multi-gigabyte bitmap.
"""

import json
import math
import os
from pathlib import Path

from rlm_docs.atomic import atomic_write_text
from rlm_docs.errors import IngestError
from rlm_docs.resources import home_dir

ENV_LANG = "RLM_DOCS_OCR_LANG"
DPI = 300
MAX_PIXELS = 40_000_000  # an A4 page at 300 dpi is 8.7 million
PAGE_TIMEOUT = 300  # seconds of Tesseract per page
INSTALL_HINT = "install Tesseract: apt-get install tesseract-ocr"


class TesseractMissing(IngestError):
    """Pages need OCR that is not cached, and the tesseract program is not installed."""


def language() -> str:
    """Tesseract's language(s), e.g. `eng` or `deu+eng` (each needs tesseract-ocr-LANG)."""
    return os.environ.get(ENV_LANG, "").strip() or "eng"


def version() -> str | None:
    """The installed Tesseract's version, or None when the binary is not there."""
    import pytesseract

    try:
        return str(pytesseract.get_tesseract_version())
    except (pytesseract.TesseractNotFoundError, OSError):
        return None


def cache_file(digest: str, lang: str) -> Path:
    return home_dir() / "ocr" / f"{digest}.tesseract-{lang}.json"


def _cached(digest: str, lang: str) -> dict[int, str]:
    """OCR'd page texts by 0-based index from the cache (an unreadable entry is ignored)."""
    try:
        data = json.loads(cache_file(digest, lang).read_text(encoding="utf-8"))
        return {int(p["index"]): str(p["markdown"]) for p in data["pages"]}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def _render(page: object) -> object:
    """A PIL image of a pypdfium2 page at DPI, scaled down to at most MAX_PIXELS."""
    width, height = page.get_size()  # type: ignore[attr-defined]  # in points (1/72 inch)
    scale = DPI / 72
    area = max(width * height, 1.0)
    scale = min(scale, math.sqrt(MAX_PIXELS / area))
    return page.render(scale=scale).to_pil()  # type: ignore[attr-defined]


def ocr_pages(path: Path, data: bytes, digest: str, indices: list[int]) -> dict[int, str]:
    """Text of the PDF's pages at the 0-based `indices`, from the cache or Tesseract.
    IngestError naming the file (and page) when Tesseract is missing or fails."""
    lang = language()
    done = _cached(digest, lang)
    todo = [i for i in indices if i not in done]
    if not todo:
        return {i: done[i] for i in indices}
    engine = version()
    if engine is None:
        raise TesseractMissing(f"{path}: local OCR needs the tesseract program ({INSTALL_HINT})")
    import pypdfium2 as pdfium
    import pytesseract

    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        raise IngestError(f"{path}: cannot render the PDF for OCR ({exc})") from None
    try:
        for i in todo:
            image = _render(pdf[i])
            try:
                done[i] = pytesseract.image_to_string(image, lang=lang, timeout=PAGE_TIMEOUT)
            except (pytesseract.TesseractError, RuntimeError, OSError) as exc:
                detail = str(exc).strip().splitlines()[-1:] or [type(exc).__name__]
                raise IngestError(
                    f"{path}: page {i + 1}: Tesseract failed ({detail[0][:200]}; {ENV_LANG}={lang})"
                ) from None
    finally:
        pdf.close()
    pages = [{"index": i, "markdown": t} for i, t in sorted(done.items())]
    record = {"model": f"tesseract {engine}", "lang": lang, "pages": pages}
    atomic_write_text(cache_file(digest, lang), json.dumps(record, ensure_ascii=False))
    return {i: done[i] for i in indices}
