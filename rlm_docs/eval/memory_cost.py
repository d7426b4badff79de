"""The cost of a run with a corpus memory, split into the first question's and the marginal
cost of each later one.

Why: with `--memory`, later questions reuse what earlier ones paid for (identical sub-calls,
notes), so a run's mean cost mixes a one-time cost with a per-question one. The questions are
taken in the order they started on the memory (`info["memory"]["sequence"]`, recorded by the
engine), which with several workers need not be the question file's order.
"""

from collections.abc import Iterable, Mapping
from typing import Any


def memory_costs(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    """`{first, later, reused_sub_calls, order}` of the rows run with a memory, else None."""
    ran = [r for r in rows if isinstance((r.get("info") or {}).get("memory"), dict)]
    if not ran:
        return None
    ran.sort(key=lambda r: r["info"]["memory"]["sequence"])

    def cost(row: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "id": row.get("id"),
            "cost_usd": row.get("cost_usd", 0.0),
            "total_tokens": row.get("input_tokens", 0) + row.get("output_tokens", 0),
            "sub_calls": row.get("sub_calls", 0),
            "reused_sub_calls": row["info"]["memory"]["reused_sub_calls"],
        }

    first, later = cost(ran[0]), [cost(r) for r in ran[1:]]
    return {
        "first": first,
        "later": later,
        "later_mean_tokens": sum(c["total_tokens"] for c in later) / len(later) if later else None,
        "later_mean_cost_usd": sum(c["cost_usd"] for c in later) / len(later) if later else None,
        "reused_sub_calls": sum(c["reused_sub_calls"] for c in [first, *later]),
        "order": [c["id"] for c in [first, *later]],
    }


def memory_sentence(costs: Mapping[str, Any]) -> str:
    """One line for the eval summary: first question's cost, then the marginal one."""
    first = costs["first"]
    line = f"memory: first question {first['total_tokens']:,} tokens (${first['cost_usd']:.4f})"
    if costs["later"]:
        line += (
            f", each later one {costs['later_mean_tokens']:,.0f} tokens "
            f"(${costs['later_mean_cost_usd']:.4f}) on average"
        )
    return line + f"; {costs['reused_sub_calls']:,} sub-calls reused"
