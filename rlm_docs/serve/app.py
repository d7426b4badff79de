"""The ASGI app of `rlm-docs serve`: an OpenAI-compatible API whose one model is rlm-docs.

`POST /v1/chat/completions` answers the last user message with a full RLM run over the served
corpus (`stream: true` sends a progress chunk per finished turn, then the answer);
`GET /v1/models` lists `rlm-docs`; `GET /health` says how many runs are in flight (the one
route open without the token); `GET /openapi.json` is the schema. Requests
may override the run's budget (`rlm_docs.budget`) and pick one of the server's models
(`rlm_docs.model` / `rlm_docs.sub_model`), always within the server's own limits.

Guards, in the order a request meets them: bearer token (401), body size (413), JSON,
field types, finite budgets, priced models for a dollar limit and question length (400, naming
the field; `serve.caller_input`), model id (404), then the concurrent-run limit (429 with
`Retry-After`).
A client that disconnects cancels its run at the run's next model call; on shutdown uvicorn
lets in-flight requests finish for the grace period, then cancels them, and the app waits for
the cancelled runs to stop. Each run's start and end are logged to `rlm_docs.serve`.
"""

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse

from rlm_docs.corpus import Corpus
from rlm_docs.engine import Prediction
from rlm_docs.engine.records import Iteration
from rlm_docs.governor import Budget
from rlm_docs.models import Client
from rlm_docs.serve import wire
from rlm_docs.serve.auth import REFUSAL, bearer_ok
from rlm_docs.serve.caller_input import BadField, parse_json, request_budget, unpriced
from rlm_docs.serve.served_runs import ServedRun, ServedRunPool, ServedRunRequest, log

POLL_S = 0.25


@dataclass
class ServeConfig:
    """What the server was started with; `budget` is both the default and the maximum."""

    corpus: Corpus
    models: dict[str, Client]  # model string -> client; requests may choose among these
    model: str
    sub_model: str
    budget: Budget = field(default_factory=Budget)
    api_key: str | None = None
    max_runs: int = 4
    max_body_bytes: int = 1_000_000
    max_question_chars: int = 20_000
    prompt: str = "docs"
    log_dir: Path | None = None
    keepalive_s: float = 15.0


class ApiError(Exception):
    """A refusal with an HTTP status and an OpenAI-style error body."""

    def __init__(
        self, status: int, message: str, *, code: str | None = None, headers: dict | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.headers = headers or {}

    def response(self) -> JSONResponse:
        kind = {
            401: "authentication_error",
            404: "not_found_error",
            429: "rate_limit_error",
            502: "api_error",
            503: "api_error",
        }.get(self.status, "invalid_request_error")
        return JSONResponse(
            wire.error_body(str(self), kind, self.code), self.status, headers=self.headers
        )


def _question(body: dict[str, Any], limit: int) -> str:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ApiError(400, "messages: expected a non-empty list")
    users = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    if not users:
        raise ApiError(400, "messages: no message with role 'user' (the question)")
    content = users[-1].get("content")
    if isinstance(content, list):  # content parts: keep the text ones
        content = "\n".join(
            str(p.get("text", ""))
            for p in content
            if isinstance(p, dict) and p.get("type") == "text"
        )
    if not isinstance(content, str) or not content.strip():
        raise ApiError(400, "messages: the last user message has no text")
    if len(content) > limit:
        raise ApiError(
            400,
            f"messages: the question is {len(content):,} characters, over this server's "
            f"limit of {limit:,}",
            code="question_too_long",
        )
    return content.strip()


class Service:
    """The state behind the routes: config, runner, and the checks each request goes through."""

    def __init__(self, cfg: ServeConfig) -> None:
        self.cfg = cfg
        self.runner = ServedRunPool(
            cfg.corpus, max_runs=cfg.max_runs, prompt=cfg.prompt, log_dir=cfg.log_dir
        )

    def authorize(self, request: Request) -> None:
        if self.cfg.api_key is None:
            return
        if not bearer_ok(request.headers.get("authorization"), self.cfg.api_key):
            raise ApiError(401, REFUSAL, code="invalid_api_key")

    async def body(self, request: Request) -> dict[str, Any]:
        """The JSON body, refused (413) past `max_body_bytes` before reading it all."""
        limit = self.cfg.max_body_bytes
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise ApiError(413, f"request body over this server's limit of {limit:,} bytes")
        data = bytearray()
        async for part in request.stream():
            data += part
            if len(data) > limit:
                raise ApiError(413, f"request body over this server's limit of {limit:,} bytes")
        try:
            body = parse_json(data)
        except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError too
            raise ApiError(400, f"request body is not JSON: {exc}") from None
        if not isinstance(body, dict):
            raise ApiError(400, "request body must be a JSON object")
        return body

    def _client(self, options: dict[str, Any], key: str, default: str) -> Client:
        spec = options.get(key, default)
        if not isinstance(spec, str):
            raise ApiError(
                400, f"rlm_docs.{key}: expected a model string, got {type(spec).__name__}"
            )
        if spec not in self.cfg.models:
            raise ApiError(
                400,
                f"rlm_docs.{key} {spec!r}: this server offers {sorted(self.cfg.models)}",
                code="model_not_offered",
            )
        return self.cfg.models[spec]

    def plan(self, body: dict[str, Any], on_turn: Any = None) -> tuple[ServedRunRequest, dict]:
        """The run a request asks for, and the settings echoed back in `rlm_docs`."""
        if body.get("model", wire.MODEL_ID) != wire.MODEL_ID:
            raise ApiError(
                404,
                f"model {body.get('model')!r} does not exist; use {wire.MODEL_ID!r}",
                code="model_not_found",
            )
        options = body.get("rlm_docs") or {}
        if not isinstance(options, dict):
            raise ApiError(400, "rlm_docs must be an object")
        question = _question(body, self.cfg.max_question_chars)
        try:
            budget = request_budget(self.cfg.budget, options.get("budget"))
        except BadField as exc:
            raise ApiError(400, str(exc)) from None
        root = self._client(options, "model", self.cfg.model)
        sub = self._client(options, "sub_model", self.cfg.sub_model)
        model = unpriced(budget, [root, sub])
        if model is not None:
            raise ApiError(
                400,
                f"rlm_docs.budget.max_cost_usd: no price is known for model {model}, so a dollar "
                "limit cannot be enforced; drop max_cost_usd or choose a priced model",
            )
        stream_options = body.get("stream_options")
        if stream_options is not None and not isinstance(stream_options, dict):
            raise ApiError(400, 'stream_options: expected an object, e.g. {"include_usage": true}')
        req = ServedRunRequest(question, root, sub, budget, on_turn)
        echo = {"model": root.spec, "sub_model": sub.spec, "budget": asdict(budget)}
        return req, echo

    def start(self, req: ServedRunRequest) -> ServedRun:
        run = self.runner.try_start(req)
        if run is None:
            wait = self.runner.retry_after()
            raise ApiError(
                429,
                f"{self.cfg.max_runs} run(s) already in flight on this server; retry in {wait}s",
                code="too_many_runs",
                headers={"Retry-After": str(wait)},
            )
        return run


def _result(pred: Prediction, cid: str, echo: dict) -> JSONResponse:
    if pred.stop_reason == "error" and not pred.answer:
        raise ApiError(502, f"the run failed: {pred.error}", code="run_failed")
    return JSONResponse(wire.completion(pred, cid, echo))


async def _answer(service: Service, request: Request, body: dict[str, Any]) -> JSONResponse:
    req, echo = service.plan(body)
    run = service.start(req)
    done = asyncio.wrap_future(run.future)
    try:
        while not (await asyncio.wait({done}, timeout=POLL_S))[0]:
            if await request.is_disconnected():
                run.stop("client disconnected")
                return JSONResponse(wire.error_body("client disconnected"), 499)
    except asyncio.CancelledError:  # uvicorn's shutdown grace is over: answer, do not crash
        run.stop("server shutting down")
        return ApiError(503, "the server is shutting down; the run was cancelled").response()
    return _result(done.result(), wire.completion_id(), echo)


def _stream(service: Service, body: dict[str, Any]) -> StreamingResponse:
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    def on_turn(depth: int, record: Iteration) -> None:  # in the run's thread
        loop.call_soon_threadsafe(queue.put_nowait, wire.progress(depth, record))

    req, echo = service.plan(body, on_turn)
    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    run = service.start(req)  # 429 before any byte is sent
    cid = wire.completion_id()

    async def events() -> AsyncIterator[str]:
        try:
            yield wire.sse(wire.chunk(cid, {"role": "assistant", "content": ""}))
            done = asyncio.wrap_future(run.future)
            last = time.monotonic()
            while not (done.done() and queue.empty()):
                try:
                    p = await asyncio.wait_for(queue.get(), timeout=POLL_S)
                except TimeoutError:
                    if time.monotonic() - last > service.cfg.keepalive_s:
                        last = time.monotonic()
                        yield ": keep-alive\n\n"
                    continue
                last = time.monotonic()
                delta = {"reasoning_content": wire.progress_line(p)}
                yield wire.sse(wire.chunk(cid, delta, extra={"rlm_docs_progress": p}))
            pred = await done
            if pred.stop_reason == "error" and not pred.answer:
                yield wire.sse(wire.error_body(f"the run failed: {pred.error}", "api_error"))
            else:
                yield wire.sse(wire.chunk(cid, {"content": wire.answer_text(pred)}))
                final = {"rlm_docs": wire.structured(pred, echo)}
                yield wire.sse(wire.chunk(cid, {}, finish_reason="stop", extra=final))
                if include_usage:
                    yield wire.sse(wire.usage_chunk(cid, pred))
            yield wire.sse("[DONE]")
        finally:
            run.stop("stream closed before the answer (client gone or server stopping)")

    return StreamingResponse(
        events(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


def make_app(cfg: ServeConfig) -> FastAPI:
    """The FastAPI app over `cfg` (see module docstring)."""
    service = Service(cfg)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        left = len(service.runner.runs)
        if left:
            log.warning("shutdown: %d run(s) still in flight; cancelling them", left)
        service.runner.stop_all("server shutting down")
        await asyncio.to_thread(service.runner.close)
        log.info("shutdown: all runs ended")

    # The schema maps every route and extension field: it is served behind the token like the
    # API it describes (only /health is open, for load balancers and probes).
    app = FastAPI(
        title="rlm-docs", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None
    )
    app.state.service = service

    @app.exception_handler(ApiError)
    async def _refused(request: Request, exc: ApiError) -> JSONResponse:
        return exc.response()

    @app.get("/v1/models")
    async def models(request: Request) -> JSONResponse:
        service.authorize(request)
        entry = {"id": wire.MODEL_ID, "object": "model", "created": 0, "owned_by": "rlm-docs"}
        return JSONResponse({"object": "list", "data": [entry]})

    @app.get("/openapi.json", include_in_schema=False)
    async def openapi(request: Request) -> JSONResponse:
        service.authorize(request)
        return JSONResponse(app.openapi())

    @app.get("/health")
    async def health() -> JSONResponse:
        return JSONResponse({"status": "ok", "runs": len(service.runner.runs)})

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Any:
        service.authorize(request)
        body = await service.body(request)
        if body.get("stream"):
            return _stream(service, body)
        return await _answer(service, request, body)

    return app
