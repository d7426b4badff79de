"""Effort calibration: MADQA's cumulative-difference curve and Kuiper range statistic.

Items are sorted by effort and the running sum of `correct_i - mean(correct)` is traced
(Tygert's cumulative differences). A well-calibrated system spreads its errors evenly over
effort, so the curve stays flat; the range `K = max - min` of the curve measures the departure.
MADQA reports K in item units; `K/N` is the scale-free form.

MADQA's harness sorts with a stable sort, so items that tie on effort (very common: many
questions take the same number of steps) enter the curve in file order and K changes when the
file is shuffled. Here every group of tied items is one block: the curve is evaluated only at
block ends, which makes K a function of the (effort, correct) multiset alone.
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import spearmanr


@dataclass(frozen=True)
class KuiperResult:
    """Range statistic, its normalised form, a permutation p-value and the curve to plot."""

    statistic: float
    normalized: float
    n: int
    accuracy: float
    p_value: float
    degenerate: bool
    efforts: list[float] = field(default_factory=list)
    curve: list[float] = field(default_factory=list)


def kuiper_applicable(effort: Sequence[float], correct: Sequence[float]) -> bool:
    """Whether K says anything about calibration: False when every question has the same
    effort (no order to calibrate against: a measure the run does not record, $0 offline) or
    the same correctness (all right or all wrong: K is 0 whatever the effort). The one n/a rule
    of every Kuiper figure and table in the report."""
    return len(set(np.asarray(effort, float).tolist())) >= 2 and (
        len(set(np.asarray(correct, float).tolist())) >= 2
    )


def _blocks(effort: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sort order, block start indices (in sorted order) and the effort value of each block."""
    order = np.argsort(effort, kind="stable")
    sorted_effort = effort[order]
    starts = np.flatnonzero(np.r_[True, sorted_effort[1:] != sorted_effort[:-1]])
    return order, starts, sorted_effort[starts]


def _range(curves: np.ndarray) -> np.ndarray:
    """Range of each curve (last axis) including the origin C_0 = 0 (float dust rounded off)."""
    curves = np.round(curves, 12)
    spread: np.ndarray = np.maximum(curves.max(axis=-1), 0.0) - np.minimum(curves.min(axis=-1), 0.0)
    return spread


def kuiper(
    effort: Sequence[float],
    correct: Sequence[float],
    *,
    permutations: int = 1000,
    seed: int = 0,
) -> KuiperResult:
    """Kuiper statistic of `correct` (0/1 or scores in [0, 1]) against `effort`.

    The p-value is the share of `permutations` random re-pairings of correctness with effort
    whose K is at least the observed one (with the +1 correction, so never 0). An empty input
    gives NaN; a constant `correct` gives K = 0 and `degenerate=True`.
    """
    e = np.asarray(effort, dtype=float)
    y = np.asarray(correct, dtype=float)
    if e.shape != y.shape or e.ndim != 1:
        raise ValueError("effort and correct must be 1-D sequences of the same length")
    if not np.all(np.isfinite(e)):
        raise ValueError("effort values must be finite numbers")
    n = len(y)
    if n == 0:
        nan = math.nan
        return KuiperResult(nan, nan, 0, nan, nan, True)
    mean = float(y.mean())
    order, starts, block_effort = _blocks(e)
    residual = y[order] - mean
    curve = np.cumsum(np.add.reduceat(residual, starts))
    stat = float(_range(curve))
    degenerate = bool(np.all(y == y[0]))
    p_value = 1.0
    if not degenerate and permutations > 0:
        rng = np.random.default_rng(seed)
        shuffled = rng.permuted(np.broadcast_to(y - mean, (permutations, n)), axis=1)
        null = _range(np.cumsum(np.add.reduceat(shuffled, starts, axis=1), axis=1))
        p_value = float((1 + np.sum(null >= stat - 1e-12)) / (1 + permutations))
    return KuiperResult(
        statistic=stat,
        normalized=stat / n,
        n=n,
        accuracy=mean,
        p_value=p_value,
        degenerate=degenerate,
        efforts=[float(v) for v in block_effort],
        curve=[float(v) for v in np.round(curve, 12)],
    )


def kuiper_bootstrap(
    effort: Sequence[float],
    correct: Sequence[float],
    *,
    n_boot: int = 1000,
    alpha: float = 0.05,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile interval of K/N over question resamples (vectorised: one sort per resample,
    the curve read only at tie-block ends)."""
    e = np.asarray(effort, dtype=float)
    y = np.asarray(correct, dtype=float)
    n = len(y)
    if n == 0:
        return (math.nan, math.nan)
    idx = np.random.default_rng(seed).integers(0, n, size=(n_boot, n))
    order = np.argsort(e[idx], axis=1, kind="stable")
    es = np.take_along_axis(e[idx], order, axis=1)
    ys = np.take_along_axis(y[idx], order, axis=1)
    curves = np.round(np.cumsum(ys - ys.mean(axis=1, keepdims=True), axis=1), 12)
    block_end = np.ones_like(es, dtype=bool)
    block_end[:, :-1] = es[:, 1:] != es[:, :-1]
    high = np.where(block_end, curves, -np.inf).max(axis=1)
    low = np.where(block_end, curves, np.inf).min(axis=1)
    stats = (np.maximum(high, 0.0) - np.minimum(low, 0.0)) / n
    lo, hi = np.quantile(stats, [alpha / 2, 1 - alpha / 2])
    return (float(lo), float(hi))


def wasted_effort_ratio(effort: Sequence[float], correct: Sequence[float]) -> float:
    """MADQA's wasted-effort ratio rho = mean effort of wrong answers / mean effort of correct ones
    (> 1: the system grinds on what it cannot solve; < 1: it fails fast). Items with no effort
    (missing predictions) are left out, as MADQA does; NaN when either side is empty."""
    e = np.asarray(effort, dtype=float)
    y = np.asarray(correct, dtype=float) >= 0.5
    spent = e > 0
    right, wrong = e[spent & y], e[spent & ~y]
    if not len(right) or not len(wrong) or right.mean() == 0:
        return math.nan
    return float(wrong.mean() / right.mean())


def effort_correlations(columns: Mapping[str, Sequence[float]]) -> dict[tuple[str, str], float]:
    """Spearman rank correlation between every pair of effort measures (NaN if one is constant)."""
    names = list(columns)
    out: dict[tuple[str, str], float] = {}
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            x, z = np.asarray(columns[a], float), np.asarray(columns[b], float)
            if len(x) < 2 or np.all(x == x[0]) or np.all(z == z[0]):
                out[(a, b)] = math.nan
            else:
                out[(a, b)] = float(spearmanr(x, z).statistic)
    return out
