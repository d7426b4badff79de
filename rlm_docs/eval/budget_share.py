"""Accuracy against the share of the budget a question used, per limited axis (a report figure).

Each question's row keeps, per budget axis, the share of its limit it used when it finished
(`budget[axis]["share_used"]`, from `Governor.remaining()`). Grouping the questions of a run
by that share shows whether the ones that spent more were the ones it got right (effort put to
use) or wrong (grinding on what it could not solve), and how many ran out (share 1). Shares
are binned by quarter, with the questions that used all of the axis (1.0, exhausted) as their
own point at the right; only the axes some run limited are drawn (depth is a setting, not a
share that runs out), and rows without budget data (baselines without a governed loop) are
left out.
"""

from collections.abc import Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from rlm_docs.eval.plots import Run, save_png, series_style  # noqa: E402
from rlm_docs.eval.results_row import ResultRow  # noqa: E402
from rlm_docs.governor import axes  # noqa: E402
from rlm_docs.governor.axes import Axis  # noqa: E402

BINS = (0.0, 0.25, 0.5, 0.75, 1.0)
# x of each bin's point: its middle, and 1.0 for the questions that used all of the axis
POINTS = (0.125, 0.375, 0.625, 0.875, 1.0)


def share_used(row: ResultRow, key: str) -> float | None:
    """The share of axis `key`'s limit `row`'s question used, or None (unlimited, no data)."""
    entry = (row.get("budget") or {}).get(key)
    share = entry.get("share_used") if isinstance(entry, dict) else None
    if isinstance(share, bool) or not isinstance(share, int | float):
        return None
    return float(share)


def _bin(share: float) -> int:
    if share >= 1.0:
        return len(BINS) - 1
    return min(int(np.searchsorted(BINS, share, side="right")) - 1, len(BINS) - 2)


def accuracy_by_share(rows: Sequence[ResultRow], key: str) -> list[tuple[float, float, int]]:
    """(x, accuracy, questions) per non-empty bin of the share of axis `key` used (`POINTS`);
    accuracy is the mean score, as `report` states it."""
    bins: list[list[float]] = [[] for _ in POINTS]
    for row in rows:
        share = share_used(row, key)
        if share is not None:
            bins[_bin(share)].append(float(row.get("score") or 0))
    return [(x, float(np.mean(b)), len(b)) for x, b in zip(POINTS, bins, strict=True) if b]


def limited_axes(runs: Sequence[Run]) -> list[Axis]:
    """The budget axes some question of some run used a share of (in declaration order)."""
    return [
        a
        for a in axes.limits()
        if a.source != "depth"
        and any(share_used(r, a.key) is not None for _, rows in runs for r in rows)
    ]


def accuracy_vs_share_used(runs: Sequence[Run], path: Any) -> bool:
    """One panel per limited axis, one line per run, each point labelled with its number of
    questions; False (nothing written) when no run has budget data."""
    limited = limited_axes(runs)
    if not limited:
        return False
    fig, panels = plt.subplots(
        1, len(limited), figsize=(max(6.0, 3.8 * len(limited)), 4.2), squeeze=False
    )
    for ax, axis in zip(panels[0], limited, strict=True):
        for i, (name, rows) in enumerate(runs):
            points = accuracy_by_share(rows, axis.key)
            if not points:
                continue
            xs, ys, ns = zip(*points, strict=True)
            ax.plot(xs, ys, label=name, **series_style(i, len(runs)))
            for x, y, n in points:
                ax.annotate(f"{n}", (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
        ax.set_xlim(-0.02, 1.06)
        ax.set_ylim(-0.02, 1.08)
        ax.set_xticks(BINS, ["0", "¼", "½", "¾", "all"])
        ax.set_xlabel(f"share of {axis.noun} used (binned by quarter)")
        ax.set_title(f"Accuracy vs share of {axis.noun} used", fontsize=9)
    panels[0][0].set_ylabel("accuracy (mean score); labels: questions")
    handles, labels = panels[0][0].get_legend_handles_labels()
    for ax in panels[0][1:]:
        more, names = ax.get_legend_handles_labels()
        handles += [h for h, n in zip(more, names, strict=True) if n not in labels]
        labels += [n for n in names if n not in labels]
    fig.tight_layout()
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), fontsize=8, ncol=2)
    save_png(fig, path)
    return True
