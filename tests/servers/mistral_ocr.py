"""A real Mistral OCR endpoint on 127.0.0.1: `POST /v1/ocr`, as the mistralai SDK calls it.

The server decodes the PDF sent as a base64 `data:` URL, reads each page's text layer with
pypdf and answers in the OCR response shape (`pages[].index` 0-based, `markdown`, `images`,
`dimensions`, `model`, `usage_info`), marking every non-blank page with "OCR:" so tests can tell OCR
output from the local fallback. It counts requests (to prove the cache means one paid call)
and can require a key or fail with a status.

    with OcrServer(api_key="k") as srv:
        os.environ["MISTRAL_BASE_URL"] = srv.base_url
        ...
        srv.requests   # [{"path", "model", "document_type", "authorized"}]
"""

import base64
import io
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pypdf import PdfReader

OCR_PATH = "/v1/ocr"
PREFIX = "data:application/pdf;base64,"


class OcrServer:
    def __init__(self, *, api_key: str | None = None, fail_status: int | None = None) -> None:
        self.api_key = api_key
        self.fail_status = fail_status
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> "OcrServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def respond(self, body: dict, authorized: bool) -> tuple[int, dict]:
        document = body.get("document") or {}
        with self._lock:
            self.requests.append(
                {
                    "path": OCR_PATH,
                    "model": body.get("model"),
                    "document_type": document.get("type"),
                    "authorized": authorized,
                }
            )
        if not authorized:
            return 401, {"message": "Unauthorized", "type": "invalid_request_error"}
        if self.fail_status is not None:
            return self.fail_status, {"message": "scripted failure"}
        url = document.get("document_url", "")
        if not url.startswith(PREFIX):
            return 422, {"detail": [{"msg": "document_url must be a PDF data URL"}]}
        data = base64.b64decode(url[len(PREFIX) :])
        reader = PdfReader(io.BytesIO(data))
        texts = [(page.extract_text() or "").strip() for page in reader.pages]
        pages = [
            {
                "index": i,
                "markdown": f"OCR: {text}" if text else "",
                "images": [],
                "dimensions": {"dpi": 200, "height": 2200, "width": 1700},
            }
            for i, text in enumerate(texts)
        ]
        usage = {"pages_processed": len(pages), "doc_size_bytes": len(data)}
        return 200, {"pages": pages, "model": "mistral-ocr-test", "usage_info": usage}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if self.path != OCR_PATH:
                    self._send(404, {"message": f"no route {self.path}"})
                    return
                auth = self.headers.get("Authorization", "")
                ok = server.api_key is None or auth == f"Bearer {server.api_key}"
                self._send(*server.respond(json.loads(raw or b"{}"), ok))

            def _send(self, status: int, payload: dict) -> None:
                body = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler
