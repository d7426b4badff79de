"""A trajectory (the records of one `RLM.ask`) as a notebook object: walk its turns, code,
outputs and sub-calls in Python, or display it as nested, collapsible HTML."""

import os
from html import escape
from typing import Any

from rlm_docs.engine.trajectory import read_trajectory
from rlm_docs.errors import DatasetError
from rlm_docs.notebook.display import block, table, usd, wrap


class TrajectoryView:
    """Read-only view over trajectory records (`rlm_docs.engine.trajectory` format)."""

    def __init__(self, records: list[dict[str, Any]]) -> None:
        if not records or records[0].get("type") != "metadata":
            raise DatasetError("not a trajectory: the first record must be of type 'metadata'")
        self.records = records

    @classmethod
    def from_file(cls, path: str | os.PathLike) -> "TrajectoryView":
        """Open a trajectory JSONL log."""
        try:
            return cls(read_trajectory(path))
        except (OSError, ValueError) as exc:
            raise DatasetError(f"{path}: cannot read trajectory ({exc})") from None

    @property
    def metadata(self) -> dict[str, Any]:
        return self.records[0]

    @property
    def iterations(self) -> list[dict[str, Any]]:
        return [r for r in self.records if r.get("type") == "iteration"]

    @property
    def result(self) -> dict[str, Any] | None:
        return next((r for r in reversed(self.records) if r.get("type") == "result"), None)

    @property
    def code(self) -> list[str]:
        """Every code block the model ran, in order."""
        return [cb["code"] for it in self.iterations for cb in it.get("code_blocks", [])]

    def sub_calls(self, recursive: bool = True) -> list[dict[str, Any]]:
        """Every `llm_query` / `rlm_query` call, each with `turn` and `depth` added; with
        `recursive`, also the calls made inside child runs."""
        depth = self.metadata.get("depth") or 0
        out = []
        for it in self.iterations:
            for cb in it.get("code_blocks", []):
                for call in cb.get("result", {}).get("rlm_calls", []):
                    out.append(call | {"turn": it["iteration"], "depth": depth})
                    if recursive and call.get("children"):
                        out += TrajectoryView(call["children"]).sub_calls()
        return out

    def ledger_rows(self) -> list[dict[str, Any]]:
        """Root-turn usage and each sub-call's ledger entry, as flat rows."""
        meta = self.metadata
        rows = []
        for it in self.iterations:
            if it.get("usage"):
                rows.append(
                    {"turn": it["iteration"], "role": "root", "model": meta.get("root_model")}
                    | it["usage"]
                )
            for cb in it.get("code_blocks", []):
                for call in cb.get("result", {}).get("rlm_calls", []):
                    if call.get("ledger"):
                        rows.append({"turn": it["iteration"]} | call["ledger"])
                    if call.get("children"):
                        rows += TrajectoryView(call["children"]).ledger_rows()
        return rows

    def __repr__(self) -> str:
        answer = (self.result or {}).get("answer")
        lines = [
            f"Trajectory: {self.metadata.get('question')!r} — {len(self.iterations)} turns, "
            f"{len(self.code)} code blocks, {len(self.sub_calls())} sub-calls; answer {answer!r}"
        ]
        for it in self.iterations:
            blocks = it.get("code_blocks", [])
            calls = sum(len(cb.get("result", {}).get("rlm_calls", [])) for cb in blocks)
            flag = " forced" if it.get("forced") else ""
            lines.append(
                f"  turn {it['iteration']}{flag}: {len(blocks)} code block(s), {calls} sub-call(s)"
            )
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        return wrap(self._html())

    def _html(self) -> str:
        meta = self.metadata
        facts = [
            (k, meta.get(k))
            for k in ("question", "root_model", "sub_model", "depth", "budget")
            if meta.get(k) is not None
        ]
        parts = [table(("field", "value"), facts, set())]
        for it in self.iterations:
            parts.append(_turn_html(it, first=it["iteration"] == 1 and not meta.get("depth")))
        rows = self.ledger_rows()
        if rows and not meta.get("depth"):
            cols = ("turn", "role", "model", "input_tokens", "output_tokens", "cost_usd")
            grid = table(cols, [[r.get(c, "") for c in cols] for r in rows], {0, 3, 4, 5})
            parts.append(f"<details><summary>Ledger ({len(rows)} calls)</summary>{grid}</details>")
        if self.result is not None:
            parts.append(f"<div><b>Answer:</b> {escape(str(self.result.get('answer')))}</div>")
        return "".join(parts)


def _call_html(call: dict[str, Any]) -> str:
    ledger = call.get("ledger") or {}
    head = " · ".join(
        str(x)
        for x in (
            call.get("kind", "call"),
            call.get("root_model") or ledger.get("model") or "",
            f"{ledger.get('input_tokens', '–')} → {ledger.get('output_tokens', '–')} tokens",
            usd(call.get("cost_usd")),
        )
    )
    body = block("prompt", str(call.get("prompt") or ""), fold_over=600)
    body += block("response", str(call.get("response") or ""), fold_over=600)
    if call.get("error"):
        body += f'<div class="err">{escape(call["error"])}</div>'
    if call.get("children"):
        body += "<div><b>child run</b></div>" + TrajectoryView(call["children"])._html()
    return f'<details style="margin-left:12px"><summary>{escape(head)}</summary>{body}</details>'


def _turn_html(it: dict[str, Any], first: bool) -> str:
    usage = it.get("usage") or {}
    head = f"Turn {it['iteration']}"
    if usage:
        head += f" · {usage.get('input_tokens', 0):,} → {usage.get('output_tokens', 0):,} tokens"
    if it.get("forced"):
        head += " · forced"
    parts = [block("model response", it.get("response") or "", fold_over=800)]
    for cb in it.get("code_blocks", []):
        res = cb.get("result", {})
        parts.append(f'<pre class="code">{escape(cb.get("code", ""))}</pre>')
        parts.append(block("output", res.get("stdout") or ""))
        if res.get("stderr"):
            parts.append(f'<pre class="err">{escape(res["stderr"])}</pre>')
        parts += [_call_html(c) for c in res.get("rlm_calls", [])]
    if it.get("notice"):
        parts.append(f'<div class="muted">{escape(it["notice"])}</div>')
    if it.get("final_answer") is not None:
        parts.append(f"<div><b>final:</b> {escape(str(it['final_answer']))}</div>")
    return f"<details{' open' if first else ''}><summary>{escape(head)}</summary>{''.join(parts)}</details>"
