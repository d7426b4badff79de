"""Report figures (matplotlib, Agg backend, PNG): calibration curves, accuracy vs cost and
vs step limit, effort distributions of correct vs wrong answers.

Accuracy vs step limit (MADQA Fig. 9) is computed from the recorded step counts: under a limit
of s root steps a question keeps its score only if the run finished within s steps, and counts
as wrong otherwise. This is a lower bound of what a forced answer at step s would have scored
(trajectories do not record a candidate answer at every step).
"""

import io
from collections.abc import Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from rlm_docs.atomic import atomic_write_bytes  # noqa: E402
from rlm_docs.eval.aggregate import effort_value  # noqa: E402
from rlm_docs.eval.effort import kuiper  # noqa: E402

Run = tuple[str, Sequence[dict[str, Any]]]
MEASURES = (("steps", "root steps"), ("total_tokens", "total tokens"))


def _save(fig: Any, path: Any) -> None:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    atomic_write_bytes(path, buffer.getvalue())


def _correct(rows: Sequence[dict[str, Any]]) -> np.ndarray:
    return np.array([float(bool(r.get("correct"))) for r in rows])


def cumulative_differences(runs: Sequence[Run], path: Any) -> None:
    """Tygert-style curves: cumulative (correct - mean)/N against the fraction of questions
    ordered by effort; tied efforts are one step of the curve."""
    fig, axes = plt.subplots(1, len(MEASURES), figsize=(11, 4))
    for ax, (measure, label) in zip(axes, MEASURES, strict=True):
        for name, rows in runs:
            effort = np.array([effort_value(r, measure) for r in rows])
            res = kuiper(effort, _correct(rows), permutations=0)
            if res.n == 0:
                continue
            counts = np.array([np.sum(effort <= e) for e in res.efforts]) / res.n
            ax.step(
                np.r_[0.0, counts],
                np.r_[0.0, np.array(res.curve) / res.n],
                where="post",
                label=f"{name} (K/N={res.normalized:.3f})",
            )
        ax.axhline(0, color="grey", linewidth=0.8)
        ax.set_xlabel(f"fraction of questions, ordered by {label}")
        ax.set_ylabel("cumulative (correct - accuracy) / N")
        ax.set_title(f"Effort calibration: {label}")
        ax.legend(fontsize=8)
    _save(fig, path)


def accuracy_vs_cost(runs: Sequence[Run], summaries: Sequence[dict[str, Any]], path: Any) -> None:
    """Accuracy (with bootstrap CI) against mean tokens and mean dollars per question."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for (name, _), s in zip(runs, summaries, strict=True):
        acc = s["accuracy"]
        err = [[acc["value"] - acc["low"]], [acc["high"] - acc["value"]]]
        for ax, key in zip(axes, ("total_tokens", "cost_usd"), strict=True):
            ax.errorbar(s[key]["value"], acc["value"], yerr=err, fmt="o", capsize=4, label=name)
    axes[0].set_xlabel("mean total tokens per question")
    axes[1].set_xlabel("mean dollars per question")
    for ax in axes:
        ax.set_ylabel("accuracy")
        ax.set_ylim(-0.02, 1.02)
        ax.legend(fontsize=8)
    axes[0].set_title("Accuracy vs tokens")
    axes[1].set_title("Accuracy vs cost")
    _save(fig, path)


def step_limit_curve(rows: Sequence[dict[str, Any]], max_steps: int) -> list[float]:
    """Accuracy under step limits 1..max_steps (see module docstring)."""
    steps = np.array([effort_value(r, "steps") for r in rows])
    score = np.array([float(r.get("score") or 0) for r in rows])
    if len(rows) == 0:
        return [0.0] * max_steps
    return [float(np.mean(np.where(steps <= s, score, 0.0))) for s in range(1, max_steps + 1)]


def accuracy_vs_step_limit(runs: Sequence[Run], path: Any) -> None:
    """MADQA Fig. 9: how accuracy grows as the root-step limit is raised."""
    top = max([int(effort_value(r, "steps")) for _, rows in runs for r in rows] + [1])
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, rows in runs:
        ax.plot(range(1, top + 1), step_limit_curve(rows, top), marker="o", label=name)
    ax.set_xlabel("root-step limit")
    ax.set_ylabel("accuracy (runs finished within the limit)")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("Accuracy vs step limit")
    ax.legend(fontsize=8)
    _save(fig, path)


def effort_distributions(runs: Sequence[Run], path: Any) -> None:
    """Histograms of effort for correct vs wrong answers, per run and measure."""
    fig, axes = plt.subplots(len(runs), len(MEASURES), figsize=(11, 2.8 * len(runs)), squeeze=False)
    for i, (name, rows) in enumerate(runs):
        ok = _correct(rows).astype(bool)
        for j, (measure, label) in enumerate(MEASURES):
            ax = axes[i][j]
            effort = np.array([effort_value(r, measure) for r in rows])
            bins = np.histogram_bin_edges(effort, bins=min(20, max(len(set(effort)), 1)))
            ax.hist(effort[ok], bins=bins, alpha=0.6, label=f"correct ({ok.sum()})")
            ax.hist(effort[~ok], bins=bins, alpha=0.6, label=f"wrong ({(~ok).sum()})")
            ax.set_title(f"{name}: {label}", fontsize=9)
            ax.legend(fontsize=7)
    fig.tight_layout()
    _save(fig, path)
