"""How each system decomposed the corpus, in numbers: the report's decomposition table.

A result row carries its question's decomposition record (field names in
docs/guide/evaluation.md): flat columns such as `fanouts` (the batch sizes of its
`llm_query_batched` calls), `corpus_share_read` and `strategies`, or the same fields in a
`decomposition` dict. Rows are grouped per system and, when the questions carry them (generated
workloads), per `workload` and `target_tokens`, so one table row is one point of the scaling
study. A group whose rows have no record (runs made before the record existed, or questions that
never ran) shows n/a for those columns instead of a made-up 0.
"""

import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rlm_docs.eval.aggregate import effort_value
from rlm_docs.eval.filters import row_field
from rlm_docs.eval.results_row import ResultRow

HEADERS = [
    "System",
    "Workload",
    "Length",
    "N",
    "Sub-calls/q",
    "Batches/q",
    "Fan-out mean",
    "Fan-out max",
    "Child runs/q",
    "Pages read/q",
    "Corpus read",
    "Strategy mix",
]


@dataclass
class Group:
    """The rows of one system on one workload at one context length (None: not a workload)."""

    system: str
    workload: str | None
    target_tokens: int | None
    rows: list[ResultRow]

    @property
    def context_tokens(self) -> float:
        """Mean rendered context of the group's questions (the x of a scaling plot), else the
        target length."""
        values = [row_field(r, "context_tokens") for r in self.rows]
        numbers = [float(v) for v in values if isinstance(v, int | float)]
        return sum(numbers) / len(numbers) if numbers else float(self.target_tokens or 0)


def field(row: Mapping[str, Any], name: str) -> Any:
    """A decomposition field of `row`: the flat column, else the `decomposition` dict's entry
    (a JSON string when read back from Parquet); None when the row has no record."""
    if row.get(name) is not None:
        return row[name]
    record = row.get("decomposition")
    if isinstance(record, str):
        try:
            record = json.loads(record)
        except json.JSONDecodeError:
            return None
    return record.get(name) if isinstance(record, dict) else None


def has_record(row: Mapping[str, Any]) -> bool:
    """Whether `row` carries a decomposition record (its `fanouts` or `corpus_share_read`)."""
    return field(row, "fanouts") is not None or field(row, "corpus_share_read") is not None


def groups(named: Sequence[tuple[str, Sequence[ResultRow]]]) -> list[Group]:
    """(system, rows) pairs split per workload and target length, in workload, length and then
    system order (the first appearance of each system)."""
    out: dict[tuple[str | None, int | None, str], Group] = {}
    for system, rows in named:
        for row in rows:
            workload = row_field(row, "workload")
            target = row_field(row, "target_tokens")
            key = (
                str(workload) if workload is not None else None,
                int(target) if isinstance(target, int | float) else None,
                system,
            )
            out.setdefault(key, Group(system, key[0], key[1], [])).rows.append(row)
    order = {name: i for i, (name, _) in enumerate(named)}
    return sorted(
        out.values(),
        key=lambda g: (g.workload or "", g.target_tokens or 0, order[g.system]),
    )


def has_workloads(found: Sequence[Group]) -> bool:
    """Whether any group is a generated workload (the Workload and Length columns apply)."""
    return any(g.workload is not None or g.target_tokens is not None for g in found)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def _num(value: float, digits: int = 1) -> str:
    return "n/a" if math.isnan(value) else f"{value:,.{digits}f}"


def batch_sizes(rows: Sequence[ResultRow]) -> list[int]:
    """Every batch size of every row, pooled (the fan-out histogram's data)."""
    return [int(n) for r in rows for n in (field(r, "fanouts") or [])]


def strategy_mix(rows: Sequence[ResultRow]) -> str:
    """`grep 75%, direct-read 25%`: the share of recorded questions carrying each tag (a
    question may carry several, so shares can sum past 100%); n/a without records."""
    recorded = [r for r in rows if has_record(r)]
    if not recorded:
        return "n/a"
    tags = Counter(t for r in recorded for t in set(field(r, "strategies") or []))
    if not tags:
        return "none"
    ranked = sorted(tags.items(), key=lambda item: (-item[1], item[0]))  # ties by name
    return ", ".join(f"{tag} {n / len(recorded):.0%}" for tag, n in ranked)


def summary(group: Group) -> dict[str, float]:
    """Means over the group's recorded rows (NaN when none is recorded); fan-out over all
    batches pooled, so a question with many batches weighs as much as its batches."""
    recorded = [r for r in group.rows if has_record(r)]
    sizes = batch_sizes(recorded)
    shares = [float(field(r, "corpus_share_read") or 0) for r in recorded]
    per_q = {
        name: _mean([float(field(r, name) or 0) for r in recorded])
        for name in ("batches", "child_runs", "pages_looked")
    }
    return {
        "n": len(group.rows),
        "recorded": len(recorded),
        "sub_calls": _mean([effort_value(r, "sub_calls") for r in group.rows]),
        "fanout_mean": _mean(sizes) if sizes else (0.0 if recorded else math.nan),
        "fanout_max": float(max(sizes)) if sizes else (0.0 if recorded else math.nan),
        "corpus_share_read": _mean(shares),
        **per_q,
    }


def table(found: Sequence[Group]) -> tuple[list[str], list[list[str]]]:
    """Headers and rows of the decomposition table (Workload and Length only for workloads)."""
    workloads = has_workloads(found)
    rows = []
    for g in found:
        s = summary(g)
        share = s["corpus_share_read"]
        n = str(s["n"]) if s["recorded"] in (0, s["n"]) else f"{s['n']} ({s['recorded']} recorded)"
        cells = [
            g.system,
            g.workload or "—",
            f"{g.target_tokens:,}" if g.target_tokens else "—",
            n,
            _num(s["sub_calls"]),
            _num(s["batches"]),
            _num(s["fanout_mean"]),
            _num(s["fanout_max"], 0),
            _num(s["child_runs"]),
            _num(s["pages_looked"]),
            "n/a" if math.isnan(share) else f"{share:.1%}",
            strategy_mix(g.rows),
        ]
        rows.append(cells if workloads else cells[:1] + cells[3:])
    return (HEADERS if workloads else HEADERS[:1] + HEADERS[3:]), rows
