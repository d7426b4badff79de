"""Report figures (matplotlib, Agg backend, PNG): calibration curves, accuracy vs cost and
vs step limit, effort distributions of correct vs wrong answers.

Accuracy vs step limit (MADQA Fig. 9) is computed from the recorded step counts. A limit of s
means what `--max-steps s` means: s ordinary root turns, then one forced answering turn, so a
question answered on its forced turn (stop reason `forced`) counts at the limit of its ordinary
turns, one below its recorded steps. Under limit s a question keeps its score only if its run
finished within s ordinary turns, and counts as wrong otherwise: a lower bound of what a
forced answer at turn s would have scored (trajectories do not record a candidate answer at
every turn). At a run's own limit the bound is its accuracy.

Readability rules every figure follows: each series has its own marker, dash pattern and width
(drawn widest first), so identical series stay visible on top of each other instead of hiding
one another; counts (steps, questions) get integer ticks; an axis whose values are all 0 (a $0
cost) is drawn from 0 with a note instead of matplotlib's symmetric -0.04..0.04 span; token
counts are labelled 16k, 100k, 1M (never an offset like `+1.219e5`), on a log axis when they
span more than LOG_SPREAD times.
"""

import io
import math
from collections.abc import Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import (  # noqa: E402
    Formatter,
    FuncFormatter,
    LogLocator,
    MaxNLocator,
    NullFormatter,
)

from rlm_docs.atomic import atomic_write_bytes  # noqa: E402
from rlm_docs.eval.aggregate import effort_value  # noqa: E402
from rlm_docs.eval.effort import kuiper, kuiper_applicable  # noqa: E402
from rlm_docs.eval.results_row import ResultRow  # noqa: E402
from rlm_docs.governor import axes as effort_axes  # noqa: E402

Run = tuple[str, Sequence[ResultRow]]
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
_DASHES = ("-", "--", ":", "-.", (0, (5, 1)), (0, (3, 1, 1, 1)))


def _figure_measures() -> list[tuple[str, str]]:
    """(row field, human name) of the calibration and distribution figures (`Axis.figure`)."""
    return [(a.name, a.noun) for a in effort_axes.figure_measures()]


def _counted(measure: str) -> bool:
    """Whether `measure` counts whole things (steps, sub-calls): integer bins and ticks."""
    axis = effort_axes.axis(measure)
    return axis is not None and axis.unit == "count"


def series_colour(i: int, n: int) -> Any:
    """Colour of series `i` of `n`, distinct for every series: matplotlib's 10-colour cycle up
    to 10 series, tab20 up to 20, evenly spaced hues of a continuous map beyond."""
    if n <= 10:
        return f"C{i}"
    if n <= 20:
        return plt.get_cmap("tab20")(i)
    return plt.get_cmap("turbo")(0.05 + 0.9 * i / (n - 1))


def series_style(i: int, n: int) -> dict[str, Any]:
    """Line/marker style of series `i` of `n`: its own colour (`series_colour`); earlier series
    wider and bigger, so an identical later series is drawn visibly inside them."""
    rank = (n - 1 - i) / max(n - 1, 1)  # 1 for the first series, 0 for the last
    return {
        "color": series_colour(i, n),
        "marker": _MARKERS[i % len(_MARKERS)],
        "linestyle": _DASHES[i % len(_DASHES)],
        "linewidth": 1.2 + 3.0 * rank,
        "markersize": 5 + 7 * rank,
        "markerfacecolor": "none" if rank else None,
        "markeredgewidth": 1.5,
        "alpha": 0.9,
    }


def _from_zero(ax: Any, values: Sequence[float], what: str) -> None:
    """Draw a non-negative x axis from 0 (a small margin keeps markers at 0 whole); when every
    value is 0, give it a unit span and say so."""
    top = max(values, default=0.0)
    span = top * 1.1 if top > 0 else 1.0
    ax.set_xlim(-0.03 * span, span)
    if top <= 0:  # under the axis label, off the data and any legend
        ax.set_xlabel(f"{ax.get_xlabel()}\n(every run: {what} = 0)".lstrip("\n"))


def legend_below(fig: Any, ax: Any, fontsize: int = 8) -> None:
    """One legend for the figure, below its panels and off the data (as the context-length
    figure's): the handles of `ax`, in up to 4 columns. Call after the axes are labelled."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    fig.tight_layout()
    fig.legend(
        handles,
        labels,
        loc="upper center",
        bbox_to_anchor=(0.5, 0.0),
        ncol=min(len(labels), 4),
        fontsize=fontsize,
    )  # save_png's bbox_inches="tight" grows the canvas to take it in


LOG_SPREAD = 20.0  # max/min of positive values above which a token axis is logarithmic


def human_count(value: float, _pos: Any = None, digits: int = 2) -> str:
    """A tick label for a count: 950, 16k, 1.5k, 100k, 1M, 2.5M (a FuncFormatter function),
    rounded to `digits` decimals of its unit."""
    sign, v = ("-" if value < 0 else ""), abs(float(value))
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if v >= scale:
            return f"{sign}{round(v / scale, digits):g}{suffix}"
    return f"{sign}{round(v, digits):g}"


class HumanCounts(Formatter):
    """`human_count` labels with as many decimals as the ticks of one axis need to read
    differently: a narrow range such as map-reduce's token totals gets 3.251M, 3.253M, 3.255M
    instead of 3.25M, 3.25M, 3.26M."""

    def __call__(self, x: float, pos: Any = None) -> str:
        return human_count(x)

    def format_ticks(self, values: Any) -> list[str]:
        labels = [human_count(v) for v in values]
        for digits in range(3, 8):
            if len(set(labels)) == len(labels):
                break
            labels = [human_count(v, digits=digits) for v in values]
        return labels


def power_of_two(value: float, _pos: Any = None) -> str:
    """Tick label of a log2 axis: 2^13 for exact powers of two, plain digits otherwise."""
    exponent = math.log2(value) if value > 0 else 0.5
    if exponent == int(exponent):
        return f"$2^{{{int(exponent)}}}$"
    return f"{value:,.0f}"


def _count_axis(axis: Any) -> None:
    """Human labels on a linear count axis, without matplotlib's offset label."""
    axis.set_major_formatter(HumanCounts())


def _token_axis(ax: Any, values: Sequence[float], what: str) -> None:
    """The x axis of token counts: log when the positive values span more than LOG_SPREAD
    times (ticks at 1, 2, 5 x 10^k), else linear from 0; human labels either way."""
    positive = [v for v in values if v > 0]
    if positive and max(positive) / min(positive) > LOG_SPREAD:
        ax.set_xscale("log")
        ax.set_xlim(min(positive) / 1.5, max(positive) * 1.5)
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_minor_formatter(NullFormatter())
    else:
        _from_zero(ax, values, what)
    ax.xaxis.set_major_formatter(HumanCounts())


def save_png(fig: Any, path: Any) -> None:
    """Write `fig` as a PNG atomically and free it."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    atomic_write_bytes(path, buffer.getvalue())


def _correct(rows: Sequence[ResultRow]) -> np.ndarray:
    return np.array([float(bool(r.get("correct"))) for r in rows])


def cumulative_differences(runs: Sequence[Run], path: Any) -> None:
    """Tygert-style curves: cumulative (correct - mean)/N against the fraction of questions
    ordered by effort; tied efforts are one step of the curve. One legend for both panels,
    below them, each run's K/N per measure in its entry: two legends of a dozen runs side by
    side would run into each other."""
    measured = _figure_measures()
    fig, axes = plt.subplots(1, len(measured), figsize=(11, 4), squeeze=False)
    axes = axes[0]
    k_ns: list[list[str]] = [[] for _ in runs]
    for ax, (measure, label) in zip(axes, measured, strict=True):
        for i, (_, rows) in enumerate(runs):
            effort = np.array([effort_value(r, measure) for r in rows])
            res = kuiper(effort.tolist(), _correct(rows).tolist(), permutations=0)
            if res.n == 0:
                k_ns[i].append("n/a")
                continue
            counts = np.array([np.sum(effort <= e) for e in res.efforts]) / res.n
            applicable = kuiper_applicable(effort.tolist(), _correct(rows).tolist())
            k_ns[i].append(f"{res.normalized:.3f}" if applicable else "n/a")
            ax.step(
                np.r_[0.0, counts],
                np.r_[0.0, np.array(res.curve) / res.n],
                where="post",
                label=f"run {i}",
                **series_style(i, len(runs)),
            )
        ax.set_xlim(0, 1)
        ax.axhline(0, color="grey", linewidth=0.8)
        ax.set_xlabel(f"fraction of questions, ordered by {label}")
        ax.set_title(f"Effort calibration: {label}")
    axes[0].set_ylabel("cumulative (correct - accuracy) / N")
    fig.tight_layout(w_pad=2.0)
    handles = {h.get_label(): h for ax in axes for h in ax.get_legend_handles_labels()[0]}
    shown = [i for i in range(len(runs)) if f"run {i}" in handles]
    measures = " / ".join(label for _, label in measured)
    fig.legend(
        [handles[f"run {i}"] for i in shown],
        [f"{runs[i][0]} (K/N {' / '.join(k_ns[i])})" for i in shown],
        loc="upper center",
        bbox_to_anchor=(0.5, 0.0),
        ncol=1 if len(shown) <= 6 else 2,
        fontsize=7,
        title=f"K/N: {measures}",
        title_fontsize=7,
    )
    save_png(fig, path)


def accuracy_vs_cost(runs: Sequence[Run], summaries: Sequence[dict[str, Any]], path: Any) -> None:
    """Accuracy (with bootstrap CI) against mean tokens and mean dollars per question."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    keys = ("total_tokens", "cost_usd")
    for i, ((name, _), s) in enumerate(zip(runs, summaries, strict=True)):
        acc = s["accuracy"]
        err = [[acc["value"] - acc["low"]], [acc["high"] - acc["value"]]]
        style = series_style(i, len(runs))
        style.pop("linestyle")
        for ax, key in zip(axes, keys, strict=True):
            ax.errorbar(s[key]["value"], acc["value"], yerr=err, capsize=4, label=name, **style)
    axes[0].set_xlabel("mean total tokens per question")
    axes[1].set_xlabel("mean dollars per question")
    axes[1].xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"${v:g}"))
    _token_axis(axes[0], [s["total_tokens"]["value"] for s in summaries], "tokens")
    _from_zero(axes[1], [s["cost_usd"]["value"] for s in summaries], "cost")
    for ax in axes:
        ax.set_ylabel("accuracy")
        ax.set_ylim(-0.02, 1.02)
    axes[0].set_title("Accuracy vs tokens")
    axes[1].set_title("Accuracy vs cost")
    legend_below(fig, axes[0])
    save_png(fig, path)


FORCED_NOTE = "limit s: s ordinary turns, then a forced answer, counted at s"


def ordinary_steps(row: ResultRow) -> int:
    """Root turns of a row before its forced answering turn (all of them if none was forced)."""
    steps = int(effort_value(row, "steps"))
    return max(steps - 1, 1) if row.get("stop_reason") == "forced" else steps


def step_limit_curve(rows: Sequence[ResultRow], max_steps: int) -> list[float]:
    """Accuracy under step limits 1..max_steps (see module docstring)."""
    steps = np.array([ordinary_steps(r) for r in rows])
    score = np.array([float(r.get("score") or 0) for r in rows])
    if len(rows) == 0:
        return [0.0] * max_steps
    return [float(np.mean(np.where(steps <= s, score, 0.0))) for s in range(1, max_steps + 1)]


def accuracy_vs_step_limit(
    runs: Sequence[Run], path: Any, exact: dict[str, dict[int, float]] | None = None
) -> None:
    """MADQA Fig. 9: how accuracy grows as the root-step limit is raised. The lower bound is
    read from each run's step counts (see module docstring); a run with an `exact` curve (a
    step-limit sweep: {limit: accuracy of the run cut at that limit}) gets it drawn solid in
    the same colour, its lower bound dashed."""
    exact = exact or {}
    limits = [limit for curve in exact.values() for limit in curve]
    steps = [ordinary_steps(r) for _, rows in runs for r in rows]
    top = max([*steps, *limits, 1])
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for i, (name, rows) in enumerate(runs):
        curve = step_limit_curve(rows, top)
        style = series_style(i, len(runs))
        if name in exact:
            points = sorted(exact[name].items())
            exact_style = style | {"alpha": 0.5}  # the dashed lower bound shows through
            ax.plot(*zip(*points, strict=True), label=f"{name}: exact", **exact_style)
            style |= {"linestyle": "--", "marker": None, "linewidth": 1.2}
            name = f"{name}: lower bound"
        ax.plot(range(1, top + 1), curve, label=name, **style)
    if top <= 20:  # every limit a tick (MaxNLocator falls back to fractions for one or two)
        ax.set_xticks(range(1, top + 1))
    else:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlim(0.5, top + 0.5)
    ax.set_xlabel("root-step limit (ordinary turns, as --max-steps)")
    ax.set_ylabel("accuracy")
    ax.set_ylim(-0.02, 1.02)
    title = f"Accuracy vs step limit\n({FORCED_NOTE})"
    if not exact:  # subtitles, off the data (series at accuracy 0 would overdraw them)
        title += "\n(lower bound: a question counts only if it finished within the limit)"
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    save_png(fig, path)


def effort_distributions(runs: Sequence[Run], path: Any) -> None:
    """Histograms of effort for correct vs wrong answers, per run and measure."""
    measured = _figure_measures()
    fig, axes = plt.subplots(len(runs), len(measured), figsize=(11, 2.8 * len(runs)), squeeze=False)
    for i, (name, rows) in enumerate(runs):
        ok = _correct(rows).astype(bool)
        for j, (measure, label) in enumerate(measured):
            ax = axes[i][j]
            effort = np.array([effort_value(r, measure) for r in rows])
            if _counted(measure) and len(effort):  # one bar per integer, centred
                low, top = int(effort.min()), int(effort.max())
                bins = np.arange(low - 0.5, top + 1.5) if top - low < 40 else 20
                ax.xaxis.set_major_locator(MaxNLocator(integer=True))
                if top - low < 40:
                    ax.set_xticks(range(max(low - 1, 0), top + 2))
                    ax.set_xlim(low - 1, top + 1)
            else:
                bins = np.histogram_bin_edges(effort, bins=min(20, max(len(set(effort)), 1)))
                _count_axis(ax.xaxis)
            ax.hist(
                [effort[ok], effort[~ok]],
                bins=bins,
                stacked=True,
                color=["tab:blue", "tab:orange"],
                label=[f"correct ({ok.sum()})", f"wrong ({(~ok).sum()})"],
            )
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
            ax.set_ylabel("questions", fontsize=8)
            ax.set_title(f"{name}: {label}", fontsize=9)
            ax.legend(fontsize=7)
    fig.tight_layout()
    save_png(fig, path)


def kuiper_by_measure(
    results: Sequence[tuple[str, dict[str, dict[str, Any] | None]]],
    measures: Sequence[tuple[str, str]],
    path: Any,
) -> bool:
    """K/N with its 95% bootstrap interval per effort measure (x) and run (markers side by side
    within a measure); measures and runs that are n/a throughout are left out (the table lists
    them). False (nothing written) when no measure has a value."""
    shown = [(m, label) for m, label in measures if any(r.get(m) for _, r in results)]
    results = [(name, r) for name, r in results if any(r.get(m) for m, _ in shown)]
    if not shown:
        return False
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(shown) + 2), 4.2))
    width = 0.7 / max(len(results), 1)
    for i, (name, blocks) in enumerate(results):
        style = series_style(i, len(results))
        style.pop("linestyle")
        style.pop("linewidth")  # a wide error bar would hide its neighbours
        xs: list[float] = []
        ks: list[float] = []
        err: list[list[float]] = [[], []]
        for j, (measure, _) in enumerate(shown):
            block = blocks.get(measure)
            if not block:
                continue
            xs.append(j - 0.35 + width * (i + 0.5))
            ks.append(block["normalized"])
            err[0].append(max(block["normalized"] - block["low"], 0.0))
            err[1].append(max(block["high"] - block["normalized"], 0.0))
        ax.errorbar(
            xs, ks, yerr=err, capsize=3, elinewidth=1.3, linestyle="none", label=name, **style
        )
    ax.set_xticks(range(len(shown)), [label for _, label in shown], rotation=20, ha="right")
    ax.set_xlim(-0.5, len(shown) - 0.5)
    ax.set_ylim(bottom=-0.01)
    ax.set_ylabel("Kuiper K/N (lower: better calibrated)")
    ax.set_title("Effort calibration per measure (95% bootstrap CI)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.28), ncol=2)
    save_png(fig, path)
    return True
