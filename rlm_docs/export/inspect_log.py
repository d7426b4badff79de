"""An eval run as an Inspect AI eval log (`inspect view` opens it; needs the `inspect` extra).

One sample per question: the question as input, the gold variants as target, the answer as
output, the run's scores (accuracy, ANLS*, page and document F1) as one dict-valued score, the
model usage per model from the ledger, and the trajectory as events: each root turn a span
holding the root model call and one span per REPL cell, the cell as a `repl` tool call with the
sub-calls its code made as model events inside it (a child run's turns nested the same way).

The log is built from Inspect's own types and written with its own writer, so the file is what
Inspect itself would write; only what the run recorded is used (nothing is re-run or guessed).
"""

import hashlib
import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from rlm_docs.engine.records import Iteration, SubCall, Trajectory
from rlm_docs.engine.timeline import run_start, sub_call_time, turn_times
from rlm_docs.errors import ConfigError
from rlm_docs.export.run_files import read_run, trajectory_of
from rlm_docs.version import __version__

SUFFIX = ".eval"
SCORER = "rlm_docs"
SCORE_KEYS = ("score", "anls", "page_f1", "doc_f1")


def export(run_dir: Path, out: Path) -> Path:
    """Write the run at `run_dir` as an Inspect log at `out` (`.eval`, or `.json`)."""
    try:
        from inspect_ai.log import write_eval_log
    except ImportError:
        raise ConfigError(
            "--format inspect needs the `inspect` extra: pip install 'rlm-docs[inspect]'"
        ) from None
    if out.suffix not in (".eval", ".json"):
        raise ConfigError(f"--out {out}: an Inspect log ends in .eval or .json")
    manifest, rows = read_run(run_dir)
    log = _log(run_dir, manifest, rows)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_eval_log(log, str(out))
    return out


def _log(run_dir: Path, manifest: dict[str, Any], rows: Sequence[Mapping[str, Any]]) -> Any:
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalMetric,
        EvalResults,
        EvalScore,
        EvalSpec,
        EvalStats,
    )

    samples = [_sample(run_dir, manifest, row) for row in rows]
    done = [r for r in rows if r.get("status") != "missing"]
    run_id = hashlib.sha256(f"{run_dir.resolve()}|{manifest['started_at']}".encode()).hexdigest()
    spec = EvalSpec(
        eval_id=run_id[:22],
        run_id=run_id[22:44],
        created=manifest["started_at"],
        task=f"rlm-docs/{manifest['system']}",
        task_version=0,
        dataset=EvalDataset(
            name=Path(manifest["dataset"]).stem,
            location=manifest["dataset"],
            samples=len(rows),
            sample_ids=[r["id"] for r in rows],
        ),
        model=manifest["model"],
        config=EvalConfig(limit=manifest.get("limit")),
        packages={"rlm-docs": __version__},
        metadata={
            k: manifest.get(k)
            for k in ("system", "sub_model", "judge", "budget", "options", "corpus", "where")
            if manifest.get(k) is not None
        },
    )
    scores = []
    for key in SCORE_KEYS:
        values = [float(r[key]) for r in rows if r.get(key) is not None]
        if values:
            mean = EvalMetric(name="mean", value=sum(values) / len(values))
            scores.append(
                EvalScore(
                    name=key, scorer=SCORER, scored_samples=len(values), metrics={"mean": mean}
                )
            )
    usage = _usage([entry for r in rows for entry in r.get("ledger") or []])
    return EvalLog(
        status="success" if len(done) == len(rows) else "cancelled",
        eval=spec,
        results=EvalResults(total_samples=len(rows), completed_samples=len(done), scores=scores),
        stats=EvalStats(
            started_at=manifest["started_at"],
            completed_at=_completed(run_dir),
            model_usage=usage,
        ),
        samples=samples,
    )


def _completed(run_dir: Path) -> str:
    results = run_dir / "results.jsonl"
    stamp = results.stat().st_mtime if results.exists() else (run_dir / "run.json").stat().st_mtime
    return datetime.fromtimestamp(stamp, UTC).isoformat()


def _usage(ledger: list[dict[str, Any]]) -> dict[str, Any]:
    """Inspect's `ModelUsage` per model, summed over ledger entries."""
    from inspect_ai.model import ModelUsage

    sums: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for e in ledger:
        s = sums[str(e.get("model") or "unknown")]
        s["input_tokens"] += int(e.get("input_tokens") or 0)
        s["output_tokens"] += int(e.get("output_tokens") or 0)
        s["input_tokens_cache_read"] += int(e.get("cached_tokens") or 0)
        s["total_cost"] += float(e.get("cost_usd") or 0.0)
    return {
        model: ModelUsage(
            input_tokens=int(s["input_tokens"]),
            output_tokens=int(s["output_tokens"]),
            total_tokens=int(s["input_tokens"] + s["output_tokens"]),
            input_tokens_cache_read=int(s["input_tokens_cache_read"]),
            total_cost=s["total_cost"],
        )
        for model, s in sums.items()
    }


def _sample(run_dir: Path, manifest: dict[str, Any], row: Mapping[str, Any]) -> Any:
    from inspect_ai.log import EvalSample
    from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, ModelOutput
    from inspect_ai.scorer import Score

    answer = row.get("answer") or []
    answer_text = "; ".join(answer) if isinstance(answer, list) else str(answer)
    variants = row.get("answer_variants") or []
    target = [", ".join(v) if isinstance(v, list) else str(v) for v in variants]
    value = {k: float(row[k]) for k in SCORE_KEYS if row.get(k) is not None}
    value["correct"] = 1.0 if row.get("correct") else 0.0
    explanation = f"stage {row.get('stage')}" + (
        f"; judge: {row['judgment']}" if row.get("judgment") else ""
    )
    score = Score(
        value=value,
        answer=answer_text,
        explanation=explanation,
        metadata={"citations": row.get("citations") or [], "evidence": row.get("evidence") or []},
    )
    trajectory = trajectory_of(run_dir, row)
    events, started = _events(trajectory) if trajectory else ([], None)
    wall = float(row.get("wall_s") or 0.0)
    metadata = {
        k: row.get(k)
        for k in (
            "citations",
            "evidence",
            "hop_type",
            "question_type",
            "domain",
            "status",
            "steps",
            "sub_calls",
            "cost_usd",
            "stop_reason",
            "stop_axis",
            "error_type",
            "fields",
        )
        if row.get(k) is not None
    }
    return EvalSample(
        id=row["id"],
        epoch=1,
        input=row.get("question") or "",
        target=target,
        messages=[
            ChatMessageUser(content=row.get("question") or ""),
            ChatMessageAssistant(content=answer_text, model=manifest["model"]),
        ],
        output=ModelOutput.from_content(manifest["model"], answer_text),
        scores={SCORER: score},
        metadata=metadata,
        events=events,
        model_usage=_usage(row.get("ledger") or []),
        started_at=started.isoformat() if started else None,
        completed_at=(started + timedelta(seconds=wall)).isoformat() if started else None,
        total_time=wall or None,
        working_time=wall or None,
        error=None,
    )


class _Events:
    """Builds the event list of one sample; times are relative to the first turn's start."""

    def __init__(self, start: datetime) -> None:
        self.start = start
        self.events: list[Any] = []
        self.spans = 0

    def at(self, when: datetime) -> float:
        return max(0.0, (when - self.start).total_seconds())

    def span(self, name: str, kind: str, parent: str | None, when: datetime) -> str:
        from inspect_ai.event import SpanBeginEvent

        self.spans += 1
        span_id = f"s{self.spans}"
        self.events.append(
            SpanBeginEvent(
                id=span_id,
                parent_id=parent,
                type=kind,
                name=name,
                span_id=parent,
                timestamp=when,
                working_start=self.at(when),
            )
        )
        return span_id

    def end(self, span_id: str, parent: str | None, when: datetime) -> None:
        from inspect_ai.event import SpanEndEvent

        self.events.append(
            SpanEndEvent(id=span_id, span_id=parent, timestamp=when, working_start=self.at(when))
        )


def _events(trajectory: Trajectory) -> tuple[list[Any], datetime | None]:
    start = run_start(trajectory)
    if start is None:
        return [], None
    out = _Events(start)
    _turns(out, trajectory, None, start)
    return out.events, start


def _message(role: str, content: Any) -> Any:
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    kinds = {"system": ChatMessageSystem, "assistant": ChatMessageAssistant}
    return kinds.get(role, ChatMessageUser)(content=text)


def _turns(out: _Events, trajectory: Trajectory, parent: str | None, start: datetime) -> None:
    model = trajectory.metadata.root_model or "unknown"
    history: list[Any] = []
    previous_end = start
    for it in trajectory.iterations:
        times = turn_times(it, previous_end)
        span = out.span(f"turn {it.iteration}", "turn", parent, times.turn.start)
        history += [_message(m.get("role", "user"), m.get("content", "")) for m in it.prompt]
        out.events.append(_root_call(out, it, model, list(history), span, times.root_call))
        history.append(_message("assistant", it.response))
        for k, (block, when) in enumerate(zip(it.code_blocks, times.cells, strict=True), 1):
            cell = out.span(f"cell {k}", "cell", span, when.start)
            out.events.append(_tool(out, it, k, block, cell, when))
            for call in block.result.sub_calls:
                _sub_call(out, call, cell, when.start)
            out.end(cell, span, when.end)
        out.end(span, parent, times.turn.end)
        previous_end = times.turn.end


def _usage_of(input_tokens: int, output_tokens: int, cached: int, cost: float | None) -> Any:
    from inspect_ai.model import ModelUsage

    return ModelUsage(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        total_tokens=input_tokens + output_tokens,
        input_tokens_cache_read=cached or None,
        total_cost=cost,
    )


def _model_event(
    out: _Events, model: str, role: str, messages: list[Any], reply: str, span: str, when: Any
) -> Any:
    from inspect_ai.event import ModelEvent
    from inspect_ai.model import GenerateConfig, ModelOutput

    output = ModelOutput.from_content(model, reply)
    output.time = when.seconds
    return ModelEvent(
        model=model,
        role=role,
        input=messages,
        tools=[],
        tool_choice="none",
        config=GenerateConfig(),
        output=output,
        span_id=span,
        timestamp=when.start,
        working_start=out.at(when.start),
        completed=when.end,
        working_time=when.seconds,
    )


def _root_call(
    out: _Events, it: Iteration, model: str, history: list[Any], span: str, when: Any
) -> Any:
    event = _model_event(out, model, "root", history, it.response, span, when)
    if it.usage is not None:
        cached = int(it.usage.extra.get("cached_tokens") or 0)
        u = it.usage
        event.output.usage = _usage_of(u.input_tokens, u.output_tokens, cached, u.cost_usd)
    return event


def _tool(out: _Events, it: Iteration, k: int, block: Any, span: str, when: Any) -> Any:
    from inspect_ai.event import ToolEvent

    result = block.result
    text = result.stdout + (f"\n[stderr]\n{result.stderr}" if result.stderr else "")
    return ToolEvent(
        id=f"turn{it.iteration}-cell{k}",
        function="repl",
        arguments={"code": block.code},
        result=text,
        span_id=span,
        timestamp=when.start,
        working_start=out.at(when.start),
        completed=when.end,
        working_time=when.seconds,
    )


def _sub_call(out: _Events, call: SubCall, parent: str, fallback: datetime) -> None:
    from inspect_ai.model import ChatMessageUser

    when = sub_call_time(call, fallback)
    if call.child is not None:  # rlm_query: a child run, its turns nested under this span
        span = out.span(f"{call.kind} (depth {call.child.depth})", "rlm_query", parent, when.start)
        _turns(out, call.child, span, when.start)
        out.end(span, parent, when.end)
        return
    ledger = call.ledger or {}
    model = str(ledger.get("model") or call.root_model or "unknown")
    prompt = [ChatMessageUser(content=call.prompt)]
    event = _model_event(out, model, call.kind, prompt, call.response or "", parent, when)
    event.error = call.error
    event.output.usage = _usage_of(
        int(ledger.get("input_tokens") or 0),
        int(ledger.get("output_tokens") or 0),
        int(ledger.get("cached_tokens") or 0),
        call.cost_usd,
    )
    out.events.append(event)
