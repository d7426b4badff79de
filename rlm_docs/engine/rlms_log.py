"""rlms' JSONL log read as a `Trajectory`, and any `Trajectory` written as an rlms log, so each
tool's viewer shows the other's runs.

rlms' logger (`rlm.logger.RLMLogger`) writes a `metadata` line (`RLMMetadata`: root model,
depth, iterations, backend and environment settings) and one `iteration` line per root turn
(`RLMIteration`: the whole message history as `prompt`, the reply, the code blocks with their
`REPLResult`s, whose `rlm_calls` are `RLMChatCompletion`s; a child RLM's own trajectory sits in
its completion's `metadata` as `{"run_metadata", "iterations"}`). The rlm-docs format
(`engine/trajectory.py`) is that plus fields of its own, with one difference of meaning: an
iteration's `prompt` holds only the messages added since the previous turn. Reading keeps
everything: the added messages are the history's new tail after the previous reply (a history
that does not extend the previous one, as after rlms' compaction, is kept whole and marked
`prompt_full`), unknown keys stay in `extra`, a child's trajectory becomes the call's `child`.
Writing rebuilds each history the same way and keeps only rlms' keys, so an rlms log read and
written back is the same records.
"""

from datetime import UTC, datetime
from typing import Any

from rlm_docs.engine.records import (
    CodeBlock,
    Iteration,
    Metadata,
    Result,
    SubCall,
    Trajectory,
)
from rlm_docs.errors import DatasetError

METADATA_KEYS = (
    "root_model",
    "max_depth",
    "max_iterations",
    "backend",
    "backend_kwargs",
    "environment_type",
    "environment_kwargs",
    "other_backends",
)
_FULL = "prompt_full"
_ROOT_PROMPT = "Answer the following: "  # rlms' wording before the root prompt


def is_rlms_log(records: list[Any]) -> bool:
    """True for records an rlms logger wrote (its metadata line has no `format`)."""
    head = records[0] if records else None
    return isinstance(head, dict) and head.get("type") == "metadata" and "format" not in head


def _messages(prompt: Any) -> list[dict[str, Any]]:
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    if not isinstance(prompt, list):
        raise DatasetError(
            f"iteration prompt must be a list of messages, got {type(prompt).__name__}"
        )
    return prompt


def _reply(text: str | None) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def from_rlms(
    run_metadata: dict[str, Any], iterations: list[dict[str, Any]], depth: int = 0
) -> Trajectory:
    """The trajectory of one rlms run (its metadata and iteration records)."""
    if not isinstance(run_metadata, dict):
        raise DatasetError("rlms run metadata must be an object")
    traj = Trajectory(Metadata.from_dict({**run_metadata, "type": "metadata", "depth": depth}))
    history: list[dict[str, Any]] | None = None
    for record in iterations:
        if not isinstance(record, dict):
            raise DatasetError(f"rlms iteration must be an object, got {type(record).__name__}")
        it = Iteration.from_dict({**record, "type": "iteration"})
        full = _messages(record.get("prompt", []))
        previous = traj.iterations[-1].response if traj.iterations else None
        n = len(history or [])
        if history is not None and full[:n] == history and full[n : n + 1] == [_reply(previous)]:
            it.prompt = full[n + 1 :]
        else:
            it.prompt = full
            if history is not None:
                it.extra[_FULL] = True
        history = full
        for call in it.sub_calls:
            call.depth = depth
            child = call.extra.pop("metadata", None)
            if isinstance(child, dict) and "run_metadata" in child:
                call.kind = "rlm_query"
                call.child = from_rlms(
                    child["run_metadata"], child.get("iterations", []), depth + 1
                )
        traj.iterations.append(it)
    if traj.iterations and traj.metadata.question is None:
        traj.metadata.question = _root_prompt(traj.iterations[0].prompt)
    last = traj.iterations[-1] if traj.iterations else None
    if last is not None and last.final_answer is not None:
        calls = sum(len(it.sub_calls) for it in traj.iterations)
        steps = len(traj.iterations)
        traj.result = Result(answer=last.final_answer, stop_reason="final", steps=steps)
        traj.result.sub_calls = calls
    return traj


def _root_prompt(messages: list[dict[str, Any]]) -> str | None:
    """The question rlms put in its first user message (`Answer the following: ...`)."""
    for m in messages:
        text = m.get("content") if m.get("role") == "user" else None
        if isinstance(text, str) and text.startswith(_ROOT_PROMPT):
            return text[len(_ROOT_PROMPT) :].split("\n\n", 1)[0].strip() or None
    return None


def from_rlms_records(records: list[dict[str, Any]]) -> Trajectory:
    """A `Trajectory` from the lines of an rlms log file."""
    head, *rest = records
    iterations = [r for r in rest if isinstance(r, dict) and r.get("type") == "iteration"]
    meta = {k: v for k, v in head.items() if k != "type"}
    return from_rlms(meta, iterations)


def _call(call: SubCall) -> dict[str, Any]:
    usage = call.usage_summary
    if usage is None:  # rlms readers need one; build it from the governor's ledger entry
        entry = call.ledger or {}
        usage = {
            "model_usage_summaries": {
                str(call.root_model): {
                    "total_calls": 1,
                    "total_input_tokens": int(entry.get("input_tokens", 0)),
                    "total_output_tokens": int(entry.get("output_tokens", 0)),
                }
            }
        }
    out: dict[str, Any] = {
        "root_model": call.root_model,
        "prompt": call.prompt,
        "response": call.response if call.response is not None else "",
        "usage_summary": usage,
        "execution_time": call.execution_time,
    }
    if call.child is not None:
        records = to_rlms(call.child)
        out["metadata"] = {
            "run_metadata": {k: v for k, v in records[0].items() if k in METADATA_KEYS},
            "iterations": records[1:],
        }
    if call.error is not None:
        out["error"] = call.error
    return out


def _block(block: CodeBlock) -> dict[str, Any]:
    r = block.result
    return {
        "code": block.code,
        "result": {
            "stdout": r.stdout,
            "stderr": r.stderr,
            "locals": r.locals,
            "execution_time": r.execution_time,
            "rlm_calls": [_call(c) for c in r.sub_calls],
            "final_answer": r.extra.get("final_answer"),
        },
    }


def to_rlms(traj: Trajectory) -> list[dict[str, Any]]:
    """The records of an rlms log for `traj` (metadata line, then one line per iteration)."""
    m = traj.metadata.to_dict()
    meta = {"type": "metadata", "timestamp": m.get("timestamp") or datetime.now(UTC).isoformat()}
    meta |= {k: m.get(k) for k in METADATA_KEYS}
    for key in ("backend_kwargs", "environment_kwargs"):
        meta[key] = meta[key] or {}
    meta["max_iterations"] = meta["max_iterations"] or (m.get("budget") or {}).get("max_steps")
    records: list[dict[str, Any]] = [meta]
    history: list[dict[str, Any]] = []
    for n, it in enumerate(traj.iterations):
        if n == 0 or it.extra.get(_FULL):
            history = list(it.prompt)
        else:
            history = [*history, _reply(traj.iterations[n - 1].response), *it.prompt]
        records.append(
            {
                "type": "iteration",
                "iteration": it.iteration,
                "timestamp": it.timestamp,
                "prompt": history,
                "response": it.response,
                "code_blocks": [_block(b) for b in it.code_blocks],
                "final_answer": it.final_answer,
                "iteration_time": it.iteration_time,
            }
        )
    return records
