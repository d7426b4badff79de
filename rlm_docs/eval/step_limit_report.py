"""The report's exact accuracy-vs-step-limit part: for every step-limit sweep given to
`rlm-docs report` (`eval --max-steps 1,2,4,...`; see `step_limits`), the accuracy at each limit
beside the lower bound read from the longest limit's step counts, and the calls and dollars
each limit added (new calls are the ledger's uncached ones)."""

from collections.abc import Mapping

from rlm_docs.eval.aggregate import summarize
from rlm_docs.eval.plots import step_limit_curve
from rlm_docs.eval.results_row import ResultRow
from rlm_docs.eval.step_limits import calls

Rows = list[ResultRow]
HEADERS = [
    "System",
    "Step limit",
    "Exact accuracy [95% CI]",
    "Lower bound",
    "New calls",
    "Replayed calls",
    "New $",
]


def exact_curves(sweeps: Mapping[str, Mapping[int, Rows]]) -> dict[str, dict[int, float]]:
    """{run label: {limit: accuracy of that limit's run}}."""
    return {
        label: {
            limit: summarize(rows, with_kuiper=False)["accuracy"]["value"]
            for limit, rows in sorted(limits.items())
        }
        for label, limits in sweeps.items()
    }


def step_limit_sections(
    sweeps: Mapping[str, Mapping[int, Rows]],
) -> list[tuple[str, list[str], list[list[str]]]]:
    """One table over every sweep (none without sweeps): a row per run and limit, shortest
    limit first, then a total of the extra calls and dollars the shorter limits took."""
    if not sweeps:
        return []
    rows = []
    for label, limits in sweeps.items():
        longest = max(limits)
        bound = step_limit_curve(limits[longest], longest)
        extra, dollars = 0, 0.0
        for limit, limit_rows in sorted(limits.items()):
            acc = summarize(limit_rows, with_kuiper=False)["accuracy"]
            counts = calls(limit_rows)
            if limit != longest:
                extra += counts["new_calls"]
                dollars += counts["new_cost_usd"]
            rows.append(
                [
                    label,
                    str(limit),
                    f"{acc['value']:.1%} [{acc['low']:.1%}, {acc['high']:.1%}]",
                    f"{bound[limit - 1]:.1%}",
                    str(counts["new_calls"]),
                    str(counts["replayed_calls"]),
                    f"{counts['new_cost_usd']:.4f}",
                ]
            )
        rows.append(
            [label, "extra for the shorter limits", "", "", str(extra), "", f"{dollars:.4f}"]
        )
    return [("Exact accuracy vs step limit", HEADERS, rows)]
