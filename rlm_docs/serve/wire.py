"""The OpenAI chat-completions wire format for a `Prediction`: whole responses, stream chunks
and error bodies, so any OpenAI client (SDKs, chat UIs, agent frameworks) can use rlm-docs.

The reply text is the answer's values, its explanation and caveat, then its page citations;
the structured answer record (`answer` = the values, `explanation`, `caveat`), citations and
effort fields travel in an extra top-level `rlm_docs` object, which OpenAI clients keep
(`response.model_extra["rlm_docs"]` in the Python SDK) and others ignore. `usage` is the run's
exact token totals over every call it made (root turns, sub-calls, child runs, extraction).
Streamed progress goes in `delta.reasoning_content` (the field OpenAI-compatible servers use for
text that is not the answer), so clients that only concatenate `delta.content` get just the
answer.
"""

import json
import time
import uuid
from typing import Any

from rlm_docs.engine import Prediction
from rlm_docs.engine.records import Iteration

MODEL_ID = "rlm-docs"


def answer_text(pred: Prediction) -> str:
    """`value; value`, the explanation and `Caveat: ...` as paragraphs, then a `Sources:` line
    of `file p.N` citations."""
    text = "; ".join(pred.answer) if pred.answer else "(no answer)"
    if pred.explanation:
        text += "\n\n" + pred.explanation
    if pred.caveat:
        text += "\n\nCaveat: " + pred.caveat
    if pred.citations:
        text += "\n\nSources: " + "; ".join(f"{c['file']} p.{c['page']}" for c in pred.citations)
    return text


def structured(pred: Prediction, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The `rlm_docs` object: the answer record, citations and the run's effort fields."""
    return {
        "answer": pred.answer,
        "explanation": pred.explanation,
        "caveat": pred.caveat,
        "citations": pred.citations,
        "stop_reason": pred.stop_reason,
        "error": pred.error,
        **pred.effort(),
        "trajectory": pred.trajectory,
    } | (extra or {})


def usage(pred: Prediction) -> dict[str, int]:
    return {
        "prompt_tokens": pred.input_tokens,
        "completion_tokens": pred.output_tokens,
        "total_tokens": pred.input_tokens + pred.output_tokens,
    }


def completion_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex}"


def completion(pred: Prediction, cid: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """A whole `chat.completion` object."""
    return {
        "id": cid,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": MODEL_ID,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": answer_text(pred)},
                "finish_reason": "stop",
            }
        ],
        "usage": usage(pred),
        "rlm_docs": structured(pred, extra),
    }


def chunk(
    cid: str,
    delta: dict[str, Any],
    *,
    finish_reason: str | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One `chat.completion.chunk`."""
    body: dict[str, Any] = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": MODEL_ID,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }
    return body | (extra or {})


def usage_chunk(cid: str, pred: Prediction) -> dict[str, Any]:
    """The last chunk when `stream_options.include_usage` is set: no choices, the usage."""
    return {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": MODEL_ID,
        "choices": [],
        "usage": usage(pred),
    }


def sse(data: dict[str, Any] | str) -> str:
    """One server-sent event (`data: ...` and a blank line)."""
    return f"data: {data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)}\n\n"


def progress(depth: int, record: Iteration) -> dict[str, Any]:
    """What a finished turn tells a streaming caller: counts, not model code or page text."""
    return {
        "turn": record.iteration,
        "depth": depth,
        "code_blocks": len(record.code_blocks),
        "sub_calls": len(record.sub_calls),
        "errors": sum(1 for b in record.code_blocks if b.result.stderr),
        "seconds": round(float(record.iteration_time or 0.0), 3),
        "forced": record.forced,
        "final": record.final_answer is not None,
    }


def progress_line(p: dict[str, Any]) -> str:
    where = f" (child run, depth {p['depth']})" if p["depth"] else ""
    done = ", final answer" if p["final"] else ""
    return (
        f"turn {p['turn']}{where}: {p['code_blocks']} code block(s), {p['sub_calls']} "
        f"sub-call(s), {p['errors']} error(s), {p['seconds']:.1f}s{done}\n"
    )


def error_body(message: str, kind: str = "invalid_request_error", code: str | None = None) -> dict:
    """OpenAI's error shape (the SDKs read `error.message`)."""
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}
