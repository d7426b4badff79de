"""A real chat-completions HTTP server on 127.0.0.1 for offline tests of model backends.

It speaks `POST /v1/chat/completions` in the OpenAI wire format, or the Mistral one (the
mistralai SDK posts to the same path; only error bodies differ), so tests exercise the real
SDKs over real sockets instead of patching them.

Usage::

    from tests.servers.chat import ChatServer

    with ChatServer(reply=lambda messages: "42", flavor="openai", latency_s=0.0) as srv:
        client = make_client(f"openai:test-model@{srv.base_url}", cache=False)
        ...
        srv.requests        # [Request(path, headers (no Authorization), body: dict, authorized)]
        srv.served_usage()  # {"prompt_tokens", "completion_tokens", "cached_tokens", "responses"}

Constructor options:
- `reply(messages) -> str`: the assistant text (default: "ok"). A reply is cut to the request's
  `max_tokens` (cl100k tokens), as a real provider would.
- `prompt_tokens(messages) -> int`: server-side prompt count (default: tiktoken, 4/message + 3).
- `cached_tokens(messages) -> int`: reported as `prompt_tokens_details.cached_tokens` (default 0;
  the Mistral flavor includes the details object only when non-zero).
- `cache_write_tokens(messages) -> int`: prompt tokens written to the prompt cache, reported as
  `usage.cache_creation_input_tokens` (Anthropic's field, as gateways pass it on) when non-zero.
- `latency_s`: delay added to every request (benchmarks); `api_key`: when set, requests without
  `Authorization: Bearer <api_key>` get a 401, unless `refuse=False`: then every request is
  answered and `Request.authorized` only records whether it carried the key (where keys go).

Fault queue (FIFO, one fault consumed per request, then normal service resumes):
`fail(status, retry_after=None, retry_after_ms=None, message=...)`, `delay(seconds)`,
`malformed()` (200 with broken JSON), `no_usage()` (200 without a usage object),
`context_length(prompt_tokens, limit)`, `unauthorized()`.

Outage (every request fails until further notice; queued faults wait behind it):
`outage(status, message=..., retry_after=None)`, then `recover()`.
"""

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from rlm_docs.tokens import count_message_tokens, encoding

CHAT_PATH = "/v1/chat/completions"


@dataclass
class Fault:
    """One scripted misbehaviour for the next request."""

    kind: str  # "status" | "delay" | "malformed" | "no_usage" | "context_length"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    message: str = ""
    delay_s: float = 0.0
    code: str | None = None


@dataclass
class Request:
    """A request as the server saw it (the Authorization header is never stored)."""

    path: str
    headers: dict[str, str]
    body: Any
    authorized: bool


class ChatServer:
    """Threaded loopback chat server; use as a context manager (see module docstring)."""

    def __init__(
        self,
        reply: Callable[[list[dict]], str] | None = None,
        *,
        flavor: str = "openai",
        prompt_tokens: Callable[[list[dict]], int] | None = None,
        cached_tokens: Callable[[list[dict]], int] | None = None,
        cache_write_tokens: Callable[[list[dict]], int] | None = None,
        latency_s: float = 0.0,
        api_key: str | None = None,
        refuse: bool = True,
    ) -> None:
        if flavor not in ("openai", "mistral"):
            raise ValueError(f"flavor must be 'openai' or 'mistral', got {flavor!r}")
        self.reply = reply or (lambda messages: "ok")
        self.flavor = flavor
        self.prompt_tokens = prompt_tokens or count_message_tokens
        self.cached_tokens = cached_tokens or (lambda messages: 0)
        self.cache_write_tokens = cache_write_tokens or (lambda messages: 0)
        self.latency_s = latency_s
        self.api_key = api_key
        self.refuse = refuse
        self.requests: list[Request] = []
        self.served: list[dict[str, int]] = []
        self._faults: deque[Fault] = deque()
        self._outage: Fault | None = None
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """`http://127.0.0.1:PORT` (the Mistral SDK's server_url)."""
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:PORT/v1` (the OpenAI SDK's base_url)."""
        return self.url + "/v1"

    def start(self) -> "ChatServer":
        """Bind port 0 on 127.0.0.1 and serve in a daemon thread."""
        handler = type("Handler", (_Handler,), {"server_obj": self})
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler, bind_and_activate=False)
        httpd.daemon_threads = True
        httpd.request_queue_size = 128
        httpd.server_bind()
        httpd.server_activate()
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> "ChatServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- faults ---------------------------------------------------------------------------------

    def push(self, fault: Fault) -> "ChatServer":
        """Queue a fault for the next request."""
        with self._lock:
            self._faults.append(fault)
        return self

    def fail(
        self,
        status: int,
        *,
        retry_after: float | None = None,
        retry_after_ms: float | None = None,
        message: str = "injected failure",
        code: str | None = None,
    ) -> "ChatServer":
        """Answer the next request with HTTP `status` (optionally with Retry-After headers)."""
        headers = {}
        if retry_after is not None:
            headers["Retry-After"] = f"{retry_after:g}"
        if retry_after_ms is not None:
            headers["retry-after-ms"] = f"{retry_after_ms:g}"
        return self.push(Fault("status", status, headers, message, code=code))

    def delay(self, seconds: float) -> "ChatServer":
        """Hold the next request `seconds` before answering normally."""
        return self.push(Fault("delay", delay_s=seconds))

    def malformed(self) -> "ChatServer":
        """Answer the next request with 200 and a truncated JSON body."""
        return self.push(Fault("malformed"))

    def no_usage(self) -> "ChatServer":
        """Answer the next request normally but without a usage object."""
        return self.push(Fault("no_usage"))

    def context_length(self, prompt_tokens: int, limit: int) -> "ChatServer":
        """Refuse the next request as too long, worded as the flavor's provider does."""
        if self.flavor == "openai":
            message = (
                f"This model's maximum context length is {limit} tokens. However, your messages "
                f"resulted in {prompt_tokens} tokens. Please reduce the length of the messages."
            )
            code = "context_length_exceeded"
        else:
            message = (
                f"Prompt contains {prompt_tokens} tokens and 0 draft tokens, too large for model "
                f"with {limit} maximum context length"
            )
            code = "3051"
        return self.push(Fault("status", 400, {}, message, code=code))

    def unauthorized(self) -> "ChatServer":
        """Answer the next request with 401."""
        return self.push(Fault("status", 401, {}, "Incorrect API key provided", "invalid_api_key"))

    def outage(
        self, status: int, *, message: str = "outage", retry_after: float | None = None
    ) -> "ChatServer":
        """Answer every request with HTTP `status` until `recover()`."""
        headers = {} if retry_after is None else {"Retry-After": f"{retry_after:g}"}
        with self._lock:
            self._outage = Fault("status", status, headers, message)
        return self

    def recover(self) -> "ChatServer":
        """End an `outage`: requests are served again."""
        with self._lock:
            self._outage = None
        return self

    # -- accounting -----------------------------------------------------------------------------

    def served_usage(self) -> dict[str, int]:
        """Sum of the usage the server reported in successful responses."""
        with self._lock:
            rows = list(self.served)
        return {
            "prompt_tokens": sum(r["prompt_tokens"] for r in rows),
            "completion_tokens": sum(r["completion_tokens"] for r in rows),
            "cached_tokens": sum(r["cached_tokens"] for r in rows),
            "cache_write_tokens": sum(r["cache_write_tokens"] for r in rows),
            "responses": len(rows),
        }

    def _next_fault(self) -> Fault | None:
        with self._lock:
            if self._outage is not None:
                return self._outage
            return self._faults.popleft() if self._faults else None

    def _error_body(self, fault: Fault) -> dict:
        if self.flavor == "openai":
            return {
                "error": {
                    "message": fault.message,
                    "type": "invalid_request_error" if fault.status < 500 else "server_error",
                    "param": None,
                    "code": fault.code,
                }
            }
        return {
            "object": "error",
            "message": fault.message,
            "type": "invalid_request_message_error",
            "param": None,
            "code": fault.code,
        }

    def _completion(self, body: dict, with_usage: bool) -> dict:
        messages = body.get("messages") or []
        text = str(self.reply(messages))
        tokens = encoding().encode(text, disallowed_special=())
        limit = body.get("max_tokens") or body.get("max_completion_tokens")
        finish = "stop"
        if limit is not None and len(tokens) > limit:
            tokens, finish = tokens[:limit], "length"
            text = encoding().decode(tokens)
        usage = {
            "prompt_tokens": self.prompt_tokens(messages),
            "completion_tokens": len(tokens),
            "cached_tokens": self.cached_tokens(messages),
            "cache_write_tokens": self.cache_write_tokens(messages),
        }
        out: dict[str, Any] = {
            "id": f"chatcmpl-{time.monotonic_ns()}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "unknown"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": finish,
                }
            ],
        }
        if with_usage:
            out["usage"] = {
                "prompt_tokens": usage["prompt_tokens"],
                "completion_tokens": usage["completion_tokens"],
                "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"],
            }
            if usage["cached_tokens"] or self.flavor == "openai":
                out["usage"]["prompt_tokens_details"] = {"cached_tokens": usage["cached_tokens"]}
            if usage["cache_write_tokens"]:
                out["usage"]["cache_creation_input_tokens"] = usage["cache_write_tokens"]
            with self._lock:
                self.served.append(usage)
        return out


class _Handler(BaseHTTPRequestHandler):
    server_obj: ChatServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as separate writes

    def log_message(self, format: str, *args: Any) -> None:  # silence per-request logging
        pass

    def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout test); nothing to answer

    def do_POST(self) -> None:  # noqa: N802 (http.server naming)
        srv = self.server_obj
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = raw.decode("utf-8", "replace")
        auth = self.headers.get("Authorization", "")
        authorized = srv.api_key is None or auth == f"Bearer {srv.api_key}"
        headers = {k: v for k, v in self.headers.items() if k.lower() != "authorization"}
        with srv._lock:
            srv.requests.append(Request(self.path, headers, body, authorized))
        if srv.latency_s:
            time.sleep(srv.latency_s)
        if self.path != CHAT_PATH:
            self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}).encode())
            return
        if not authorized and srv.refuse:
            fault = Fault("status", 401, {}, "Incorrect API key provided", "invalid_api_key")
            self._send(401, json.dumps(srv._error_body(fault)).encode())
            return
        fault = srv._next_fault()
        if fault is not None and fault.kind == "delay":
            time.sleep(fault.delay_s)
        if fault is not None and fault.kind == "status":
            self._send(fault.status, json.dumps(srv._error_body(fault)).encode(), fault.headers)
            return
        if fault is not None and fault.kind == "malformed":
            self._send(200, b'{"id": "x", "choices": [{"message": ')
            return
        with_usage = fault is None or fault.kind != "no_usage"
        self._send(200, json.dumps(srv._completion(body, with_usage)).encode())
