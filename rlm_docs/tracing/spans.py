"""The spans of one finished question, built from its record and trajectory.

Spans are started and ended with the recorded times (`rlm_docs.engine.timeline`), after the
question has finished, so tracing costs nothing while a question runs and a trace shows what
the run directory holds. Kinds and attribute names are OpenInference's (`openinference.semconv`):
the question is an AGENT span, a turn a CHAIN, a cell a TOOL (`repl`), a model call an LLM span
with `llm.model_name`, `llm.token_count.*` (cache reads as
`llm.token_count.prompt_details.cache_read`) and `llm.cost.total`; rlm-docs' own figures are
under `rlmdocs.*`.

Secrets: every string attribute goes through `redact()`, which replaces the values of the
API-key environment variables, and nothing from the model configuration (base URLs, headers)
is recorded.
"""

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from openinference.semconv.trace import OpenInferenceSpanKindValues as Kind
from openinference.semconv.trace import SpanAttributes as A
from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode, Tracer

from rlm_docs.engine.records import Iteration, SubCall, Trajectory
from rlm_docs.engine.timeline import Span, run_start, sub_call_time, turn_times
from rlm_docs.engine.trajectory import redact

MAX_TEXT = 4000
"""Characters kept of a text attribute (prompts, replies, code, output); collectors cap
attribute sizes too, and a trace is for finding a call, the trajectory for reading it."""

_SYSTEMS = {"mistral": "mistralai"}  # OpenInference's name where it differs from the backend's


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = redact(text)
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + f"... [{len(text)} chars]"


def _ns(when: datetime) -> int:
    return int(when.timestamp() * 1_000_000_000)


def _clean(attributes: dict[str, Any]) -> dict[str, Any]:
    """Drop None; strings through `_text` (redacted, capped)."""
    out: dict[str, Any] = {}
    for key, value in attributes.items():
        if value is None:
            continue
        out[key] = _text(value) if isinstance(value, str | dict | list) else value
    return out


def _start(tracer: Tracer, name: str, parent: Any, when: Span, attributes: dict[str, Any]) -> Any:
    context = trace.set_span_in_context(parent) if parent is not None else None
    return tracer.start_span(
        name, context=context, start_time=_ns(when.start), attributes=_clean(attributes)
    )


def _llm_attributes(
    model: str | None,
    backend: str | None,
    usage: tuple[int, int, int],
    cost: float | None,
    prompt: Any,
    reply: str | None,
) -> dict[str, Any]:
    prompt_tokens, completion_tokens, cached = usage
    return {
        A.OPENINFERENCE_SPAN_KIND: Kind.LLM.value,
        A.LLM_MODEL_NAME: model,
        A.LLM_SYSTEM: _SYSTEMS.get(backend or "", backend),
        A.LLM_PROVIDER: backend,
        A.LLM_TOKEN_COUNT_PROMPT: prompt_tokens,
        A.LLM_TOKEN_COUNT_COMPLETION: completion_tokens,
        A.LLM_TOKEN_COUNT_TOTAL: prompt_tokens + completion_tokens,
        A.LLM_TOKEN_COUNT_PROMPT_DETAILS_CACHE_READ: cached,
        A.LLM_COST_TOTAL: cost,
        A.INPUT_VALUE: prompt,
        A.OUTPUT_VALUE: reply,
    }


def trace_question(
    tracer: Tracer, record: Mapping[str, Any], trajectory: Trajectory | None
) -> Any | None:
    """Emit the question's spans; returns the question span (None without a trajectory,
    e.g. a question that failed before its first turn: nothing was timed)."""
    start = run_start(trajectory) if trajectory else None
    if trajectory is None or start is None:
        return None
    whole = Span(start, start)
    question = _start(
        tracer,
        "question",
        None,
        whole,
        {
            A.OPENINFERENCE_SPAN_KIND: Kind.AGENT.value,
            A.INPUT_VALUE: record.get("question"),
            A.OUTPUT_VALUE: {"answer": record.get("answer"), "citations": record.get("citations")},
            "rlmdocs.question.id": str(record.get("id")),
            "rlmdocs.system": record.get("system"),
            "rlmdocs.status": record.get("status"),
            "rlmdocs.correct": bool(record.get("correct")),
            "rlmdocs.score": _number(record.get("score")),
            "rlmdocs.page_f1": _number(record.get("page_f1")),
            "rlmdocs.doc_f1": _number(record.get("doc_f1")),
            "rlmdocs.steps": record.get("steps"),
            "rlmdocs.sub_calls": record.get("sub_calls"),
            "rlmdocs.cost_usd": _number(record.get("cost_usd")),
            "rlmdocs.stop_reason": record.get("stop_reason"),
            "rlmdocs.error_type": record.get("error_type"),
        },
    )
    end = _turns(tracer, trajectory, question, start)
    wall = float(record.get("wall_s") or 0.0)
    if record.get("error"):
        question.set_status(Status(StatusCode.ERROR, _text(record["error"])))
    question.end(end_time=max(_ns(end), _ns(start) + int(wall * 1_000_000_000)))
    return question


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


def _turns(tracer: Tracer, trajectory: Trajectory, parent: Any, start: datetime) -> datetime:
    """The turns of one run (the question's, or a child's) under `parent`; returns their end."""
    meta = trajectory.metadata
    end = start
    for it in trajectory.iterations:
        times = turn_times(it, end)
        turn = _start(
            tracer,
            f"turn {it.iteration}",
            parent,
            times.turn,
            {
                A.OPENINFERENCE_SPAN_KIND: Kind.CHAIN.value,
                "rlmdocs.turn": it.iteration,
                "rlmdocs.depth": trajectory.depth,
                "rlmdocs.forced": it.forced or None,
            },
        )
        _root_call(tracer, it, meta.root_model, meta.backend, turn, times.root_call)
        for k, (block, when) in enumerate(zip(it.code_blocks, times.cells, strict=True), 1):
            result = block.result
            cell = _start(
                tracer,
                f"cell {k}",
                turn,
                when,
                {
                    A.OPENINFERENCE_SPAN_KIND: Kind.TOOL.value,
                    A.TOOL_NAME: "repl",
                    A.INPUT_VALUE: block.code,
                    A.OUTPUT_VALUE: result.stdout,
                    "rlmdocs.stderr": result.stderr or None,
                    "rlmdocs.restarted": result.restarted or None,
                },
            )
            if result.stderr:
                cell.set_status(Status(StatusCode.ERROR, _text(result.stderr.splitlines()[-1])))
            for call in result.sub_calls:
                _sub_call(tracer, call, cell, when.start)
            cell.end(end_time=_ns(when.end))
        turn.end(end_time=_ns(times.turn.end))
        end = times.turn.end
    return end


def _root_call(
    tracer: Tracer,
    it: Iteration,
    model: str | None,
    backend: str | None,
    parent: Any,
    when: Span,
) -> None:
    u = it.usage
    usage = (
        (u.input_tokens, u.output_tokens, int(u.extra.get("cached_tokens") or 0))
        if u
        else (0, 0, 0)
    )
    attributes = _llm_attributes(
        model, backend, usage, u.cost_usd if u else None, it.prompt, it.response
    )
    attributes["rlmdocs.role"] = "root"
    _start(tracer, "llm root", parent, when, attributes).end(end_time=_ns(when.end))


def _sub_call(tracer: Tracer, call: SubCall, parent: Any, fallback: datetime) -> None:
    when = sub_call_time(call, fallback)
    if call.child is not None:  # rlm_query: a child run, its turns nested under this span
        span = _start(
            tracer,
            call.kind,
            parent,
            when,
            {
                A.OPENINFERENCE_SPAN_KIND: Kind.AGENT.value,
                A.INPUT_VALUE: call.prompt,
                A.OUTPUT_VALUE: call.response,
                "rlmdocs.depth": call.child.depth,
            },
        )
        end = _turns(tracer, call.child, span, when.start)
        span.end(end_time=max(_ns(when.end), _ns(end)))
        return
    ledger = call.ledger or {}
    usage = (
        int(ledger.get("input_tokens") or 0),
        int(ledger.get("output_tokens") or 0),
        int(ledger.get("cached_tokens") or 0),
    )
    model = ledger.get("model") or call.root_model
    attributes = _llm_attributes(
        model, ledger.get("backend"), usage, call.cost_usd, call.prompt, call.response
    )
    attributes["rlmdocs.role"] = call.kind
    span = _start(tracer, f"llm {call.kind}", parent, when, attributes)
    if call.error:
        span.set_status(Status(StatusCode.ERROR, _text(call.error)))
    span.end(end_time=_ns(when.end))
