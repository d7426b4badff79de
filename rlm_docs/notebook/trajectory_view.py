"""A trajectory (the records of one `RLM.ask`) as a notebook object: walk its turns, code,
outputs and sub-calls in Python, or display it as nested, collapsible HTML."""

import os
from html import escape
from typing import Any

from rlm_docs.engine.records import Iteration, Metadata, Result, SubCall, Trajectory
from rlm_docs.engine.trajectory import load_trajectory
from rlm_docs.notebook.display import block, table, usd, wrap


class TrajectoryView:
    """Notebook view over one typed `Trajectory` (read by `engine.trajectory.load_trajectory`)."""

    def __init__(self, trajectory: Trajectory | list[dict[str, Any]]) -> None:
        if not isinstance(trajectory, Trajectory):
            trajectory = Trajectory.from_records(trajectory)
        self.trajectory = trajectory

    @classmethod
    def from_file(cls, path: str | os.PathLike) -> "TrajectoryView":
        """Open a trajectory JSONL log (DatasetError naming the file on a bad one)."""
        return cls(load_trajectory(path))

    @property
    def metadata(self) -> Metadata:
        return self.trajectory.metadata

    @property
    def iterations(self) -> list[Iteration]:
        return self.trajectory.iterations

    @property
    def result(self) -> Result | None:
        return self.trajectory.result

    @property
    def code(self) -> list[str]:
        """Every code block the model ran, in order."""
        return [block.code for block in self.trajectory.code_blocks]

    def sub_calls(self, recursive: bool = True) -> list[SubCall]:
        """Every `llm_query` / `rlm_query` call (each knows its `depth`); with `recursive`, also
        the calls made inside child runs (`trajectory.walk_sub_calls()` adds each call's turn)."""
        if not recursive:
            return self.trajectory.own_sub_calls()
        return [call for _, call in self.trajectory.walk_sub_calls()]

    def ledger_rows(self) -> list[dict[str, Any]]:
        """Root-turn usage and each sub-call's ledger entry, as flat rows."""
        rows = []
        for it in self.iterations:
            if it.usage is not None:
                rows.append(
                    {"turn": it.iteration, "role": "root", "model": self.metadata.root_model}
                    | it.usage.to_dict()
                )
            for call in it.sub_calls:
                if call.ledger:
                    rows.append({"turn": it.iteration} | call.ledger)
                if call.child is not None:
                    rows += TrajectoryView(call.child).ledger_rows()
        return rows

    def __repr__(self) -> str:
        answer = self.result.answer if self.result is not None else None
        lines = [
            f"Trajectory: {self.metadata.question!r} — {len(self.iterations)} turns, "
            f"{len(self.code)} code blocks, {len(self.sub_calls())} sub-calls; answer {answer!r}"
        ]
        for it in self.iterations:
            flag = " forced" if it.forced else ""
            lines.append(
                f"  turn {it.iteration}{flag}: {len(it.code_blocks)} code block(s), "
                f"{len(it.sub_calls)} sub-call(s)"
            )
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        return wrap(self._html())

    def _html(self) -> str:
        meta = self.metadata
        facts = [
            (k, getattr(meta, k))
            for k in ("question", "root_model", "sub_model", "depth", "budget")
            if getattr(meta, k) is not None
        ]
        parts = [table(("field", "value"), facts, set())]
        for it in self.iterations:
            parts.append(_turn_html(it, first=it.iteration == 1 and not meta.depth))
        rows = self.ledger_rows()
        if rows and not meta.depth:
            cols = ("turn", "role", "model", "input_tokens", "output_tokens", "cost_usd")
            grid = table(cols, [[r.get(c, "") for c in cols] for r in rows], {0, 3, 4, 5})
            parts.append(f"<details><summary>Ledger ({len(rows)} calls)</summary>{grid}</details>")
        if self.result is not None:
            parts.append(f"<div><b>Answer:</b> {escape(str(self.result.answer))}</div>")
        return "".join(parts)


def _call_html(call: SubCall) -> str:
    ledger = call.ledger or {}
    head = " · ".join(
        str(x)
        for x in (
            call.kind,
            call.root_model or ledger.get("model") or "",
            f"{ledger.get('input_tokens', '–')} → {ledger.get('output_tokens', '–')} tokens",
            usd(call.cost_usd),
        )
    )
    body = block("prompt", call.prompt, fold_over=600)
    body += block("response", call.response or "", fold_over=600)
    if call.error:
        body += f'<div class="err">{escape(call.error)}</div>'
    if call.child is not None:
        body += "<div><b>child run</b></div>" + TrajectoryView(call.child)._html()
    return f'<details style="margin-left:12px"><summary>{escape(head)}</summary>{body}</details>'


def _turn_html(it: Iteration, first: bool) -> str:
    head = f"Turn {it.iteration}"
    if it.usage is not None:
        head += f" · {it.usage.input_tokens:,} → {it.usage.output_tokens:,} tokens"
    if it.forced:
        head += " · forced"
    parts = [block("model response", it.response, fold_over=800)]
    for cb in it.code_blocks:
        parts.append(f'<pre class="code">{escape(cb.code)}</pre>')
        parts.append(block("output", cb.result.stdout))
        if cb.result.stderr:
            parts.append(f'<pre class="err">{escape(cb.result.stderr)}</pre>')
        parts += [_call_html(c) for c in cb.result.sub_calls]
    if it.notice:
        parts.append(f'<div class="muted">{escape(it.notice)}</div>')
    if it.final_answer is not None:
        parts.append(f"<div><b>final:</b> {escape(str(it.final_answer))}</div>")
    return f"<details{' open' if first else ''}><summary>{escape(head)}</summary>{''.join(parts)}</details>"
