"""The ASGI app of the metering proxy: OpenAI chat completions relayed through a `Meter`.

Routes: `POST /v1/chat/completions`, also under `/q/{question}/` and `/q/{question}/{role}/`
(so an agent whose only setting is a base URL can still name its question and role); the
headers `X-RLM-Docs-Question` / `X-RLM-Docs-Role` do the same and win over the path. `GET
/v1/models` lists the upstream models; `GET /effort` gives every question's effort fields.

A call the budget refuses is answered before anything is sent upstream: HTTP 400, error type
and code `budget_exceeded`, the axis in `error.axis` and in the message (the governor's
wording, which tells the model to answer with what it has). 400 because the official SDKs
retry 429 and 5xx, and a refusal is final. Upstream failures are 502 with the reason.
`stream: true` gets the same reply as server-sent events (the upstream call itself is whole,
so the refusal, if any, still comes as a plain error before the stream starts).
"""

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse

from rlm_docs.errors import ConfigError, ModelError
from rlm_docs.governor import BudgetExceeded
from rlm_docs.governor.prompt_cap import PromptTooLarge
from rlm_docs.models import Completion
from rlm_docs.models.errors import BadRequestError
from rlm_docs.proxy.meter import DEFAULT_QUESTION, PASSED_PARAMS, ROLES, Meter

QUESTION_HEADER = "x-rlm-docs-question"
ROLE_HEADER = "x-rlm-docs-role"
MAX_BODY_BYTES = 64_000_000  # an agent's whole context may be in one prompt
CALL_THREADS = 64


class ApiError(Exception):
    """A refusal: HTTP status and an OpenAI-style error body (the SDKs read `error.message`)."""

    def __init__(self, status: int, message: str, *, code: str | None = None, **extra: Any):
        super().__init__(message)
        self.status = status
        self.code = code
        self.extra = extra

    def response(self) -> JSONResponse:
        kind = {404: "not_found_error", 502: "api_error"}.get(self.status, "invalid_request_error")
        error = {"message": str(self), "type": kind, "param": None, "code": self.code}
        return JSONResponse({"error": error | self.extra}, self.status)


async def _body(request: Request) -> dict[str, Any]:
    """The JSON object body, refused past MAX_BODY_BYTES before it is all read."""
    data = bytearray()
    async for part in request.stream():
        data += part
        if len(data) > MAX_BODY_BYTES:
            raise ApiError(413, f"request body over the proxy's limit of {MAX_BODY_BYTES:,} bytes")
    try:
        body = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ApiError(400, f"request body is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise ApiError(400, "request body must be a JSON object")
    return body


def _sse(data: dict[str, Any] | str) -> str:
    return f"data: {data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)}\n\n"


def _messages(body: dict[str, Any]) -> list[dict]:
    """The chat messages as `{role, content}` with text content (text parts joined)."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ApiError(400, "messages: expected a non-empty list")
    out = []
    for n, m in enumerate(messages):
        if not isinstance(m, dict) or not isinstance(m.get("role"), str):
            raise ApiError(400, f"messages[{n}]: expected an object with a string 'role'")
        content = m.get("content")
        if isinstance(content, list):  # content parts: the text ones
            parts = [p.get("text") if isinstance(p, dict) else None for p in content]
            texts = [t for t in parts if isinstance(t, str)]
            if len(texts) != len(content):
                raise ApiError(400, f"messages[{n}].content: only text parts can be relayed")
            content = "".join(texts)
        if not isinstance(content, str):
            raise ApiError(400, f"messages[{n}].content: expected text")
        out.append({"role": m["role"], "content": content})
    return out


def _sampling(body: dict[str, Any]) -> dict[str, Any]:
    for name in ("tools", "functions"):
        if body.get(name):
            raise ApiError(400, f"{name}: the metering proxy relays plain chat turns only")
    if body.get("n") not in (None, 1):
        raise ApiError(400, "n: the metering proxy returns one choice per request")
    sampling = {k: body[k] for k in PASSED_PARAMS if body.get(k) is not None}
    if body.get("temperature") is not None:
        sampling["temperature"] = body["temperature"]
    cap = body.get("max_completion_tokens", body.get("max_tokens"))
    if cap is not None:
        if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
            raise ApiError(400, f"max_tokens: expected a positive whole number, got {cap!r}")
        sampling["max_tokens"] = cap
    return sampling


def _refusal(exc: BudgetExceeded) -> JSONResponse:
    error = {"message": str(exc), "type": "budget_exceeded", "param": None}
    return JSONResponse({"error": error | {"code": "budget_exceeded", "axis": exc.axis}}, 400)


def _usage(c: Completion) -> dict[str, Any]:
    return {
        "prompt_tokens": c.usage.input_tokens,
        "completion_tokens": c.usage.output_tokens,
        "total_tokens": c.usage.input_tokens + c.usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": c.usage.cached_tokens},
    }


def _metered(c: Completion, question: str, role: str) -> dict[str, Any]:
    """What the proxy adds to each reply (`rlm_docs`, ignored by clients that do not know it)."""
    return {"question_id": question, "role": role, "call_id": c.call_id, "cost_usd": c.cost_usd}


def _completion(c: Completion, cid: str, question: str, role: str) -> dict[str, Any]:
    return {
        "id": cid,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": c.model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": c.text},
                "finish_reason": "stop",
            }
        ],
        "usage": _usage(c),
        "rlm_docs": _metered(c, question, role),
    }


def _stream(c: Completion, cid: str, body: dict[str, Any], question: str, role: str) -> Any:
    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))

    head = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time())}
    head["model"] = c.model

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return _sse(head | {"choices": [choice]} | extra)

    async def events() -> AsyncIterator[str]:
        yield chunk({"role": "assistant", "content": ""})
        yield chunk({"content": c.text})
        yield chunk({}, "stop", rlm_docs=_metered(c, question, role))
        if include_usage:
            yield _sse(head | {"choices": [], "usage": _usage(c)})
        yield _sse("[DONE]")

    return StreamingResponse(
        events(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"}
    )


def make_app(meter: Meter) -> FastAPI:
    """The FastAPI app over `meter` (see module docstring)."""
    app = FastAPI(title="rlm-docs metering proxy", docs_url=None, redoc_url=None)
    app.state.meter = meter
    # Upstream calls block a thread each; asyncio's default pool (cores + 4) would queue an
    # agent's parallel sub-calls behind each other, while the governor already bounds them.
    calls = ThreadPoolExecutor(max_workers=CALL_THREADS, thread_name_prefix="rlm-docs-proxy")
    app.state.calls = calls  # shut down by whoever stops the server

    @app.exception_handler(ApiError)
    async def _refused(request: Request, exc: ApiError) -> JSONResponse:
        return exc.response()

    async def chat(request: Request, question: str, role: str) -> Any:
        question = request.headers.get(QUESTION_HEADER) or question
        role = request.headers.get(ROLE_HEADER) or role
        if role not in ROLES:
            raise ApiError(400, f"role {role!r}: expected one of {', '.join(ROLES)}")
        body = await _body(request)
        messages, sampling = _messages(body), _sampling(body)
        model = body.get("model") if isinstance(body.get("model"), str) else None
        try:
            meter.client(model)
        except ConfigError as exc:
            raise ApiError(404, str(exc), code="model_not_found") from None
        call = partial(meter.call, messages, question_id=question, role=role, model=model)
        try:
            c = await asyncio.get_running_loop().run_in_executor(calls, partial(call, **sampling))
        except BudgetExceeded as exc:
            return _refusal(exc)
        except PromptTooLarge as exc:
            raise ApiError(400, str(exc), code="prompt_too_large") from None
        except BadRequestError as exc:  # the upstream refused it as sent (too long, ...)
            raise ApiError(400, f"upstream: {exc}", code="upstream_refused") from None
        except ModelError as exc:
            raise ApiError(502, f"upstream: {exc}", code="upstream_error") from None
        cid = f"chatcmpl-{uuid.uuid4().hex}"
        if body.get("stream"):
            return _stream(c, cid, body, question, role)
        return JSONResponse(_completion(c, cid, question, role))

    @app.post("/v1/chat/completions")
    async def chat_default(request: Request) -> Any:
        return await chat(request, DEFAULT_QUESTION, "root")

    @app.post("/q/{question}/v1/chat/completions")
    async def chat_question(request: Request, question: str) -> Any:
        return await chat(request, question, "root")

    @app.post("/q/{question}/{role}/v1/chat/completions")
    async def chat_role(request: Request, question: str, role: str) -> Any:
        return await chat(request, question, role)

    @app.get("/v1/models")
    async def models() -> JSONResponse:
        data = [
            {"id": name, "object": "model", "created": 0, "owned_by": "rlm-docs-proxy"}
            for name in meter.model_names()
        ]
        return JSONResponse({"object": "list", "data": data})

    @app.get("/effort")
    async def effort() -> JSONResponse:
        return JSONResponse({q: meter.effort(q) for q in meter.questions()})

    return app
