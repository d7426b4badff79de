"""OCR of PDFs with Mistral OCR (`mistralai` SDK), cached on disk by content hash.

The PDF is sent inline as a base64 `data:` URL. The JSON response is stored as
`home_dir()/ocr/<sha256 of the PDF>.json` before it is used, so the same PDF is never paid for
twice, whichever corpus it is ingested into. The key comes from MISTRAL_API_KEY and the server
from MISTRAL_BASE_URL (default: the official API); the key never appears in errors.
"""

import base64
import json
import os
from pathlib import Path

from mistralai.client import Mistral
from mistralai.client.errors import MistralError, NoResponseError

from rlm_docs.atomic import atomic_write_text
from rlm_docs.errors import IngestError
from rlm_docs.models.http_common import scrub
from rlm_docs.models.mistral_client import DEFAULT_SERVER, ENV_KEY, TRANSPORT_ERRORS
from rlm_docs.resources import home_dir

OCR_MODEL = "mistral-ocr-latest"
ENV_BASE = "MISTRAL_BASE_URL"
TIMEOUT_MS = 600_000
# No HTTP response at all: the service is unreachable, not refusing.
_UNREACHABLE: tuple[type[BaseException], ...] = (NoResponseError, OSError, *TRANSPORT_ERRORS)


class OcrUnreachable(IngestError):
    """The OCR service could not be reached (no HTTP response at all)."""


def cache_file(digest: str) -> Path:
    return home_dir() / "ocr" / f"{digest}.json"


def cached_response(digest: str) -> dict | None:
    """The cached OCR response of a PDF, or None (an unreadable cache entry is ignored)."""
    try:
        data = json.loads(cache_file(digest).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def api_key() -> str | None:
    return os.environ.get(ENV_KEY, "").strip() or None


def _server_url() -> str | None:
    base = os.environ.get(ENV_BASE, "").strip().rstrip("/")
    return base.removesuffix("/v1") or None


def ocr_pdf(path: Path, data: bytes, digest: str) -> dict:
    """The OCR response of a PDF (as JSON-able dict), from the cache or one API call."""
    cached = cached_response(digest)
    if cached is not None:
        return cached
    key = api_key()
    if key is None:
        raise IngestError(
            f"{path}: Mistral OCR needs {ENV_KEY} (or use --ocr local: Tesseract on this machine)"
        )
    client = Mistral(api_key=key, server_url=_server_url(), timeout_ms=TIMEOUT_MS)
    url = "data:application/pdf;base64," + base64.b64encode(data).decode("ascii")
    try:
        response = client.ocr.process(
            model=OCR_MODEL,
            document={"type": "document_url", "document_url": url},
            include_image_base64=False,
            include_blocks=False,
        )
    except MistralError as exc:
        detail = scrub(f"HTTP {exc.status_code}: {exc.body or exc}", key)[:300]
        raise IngestError(f"{path}: Mistral OCR failed: {detail}") from None
    except _UNREACHABLE as exc:
        where = _server_url() or DEFAULT_SERVER
        detail = scrub(str(exc), key) or type(exc).__name__
        raise OcrUnreachable(f"{path}: Mistral OCR unreachable at {where} ({detail})") from None
    except Exception as exc:  # transport errors of httpx and the SDK's response validation
        raise IngestError(f"{path}: Mistral OCR failed: {scrub(str(exc), key)[:300]}") from None
    result = response.model_dump(mode="json", by_alias=True)
    atomic_write_text(cache_file(digest), json.dumps(result, ensure_ascii=False))
    return result
