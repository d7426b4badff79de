"""Run-level metrics with bootstrap intervals, overall and per subset.

Rows are the scored per-question records of a run, one per question of the run's question list:
a question with no prediction (crashed, interrupted, never run) is a row with status `missing`,
score 0 and zero effort, so it counts as wrong instead of leaving the denominator.

Accuracy is the mean score of the decided rows: a row whose gold is prose and that no judge
scored (`stage` `needs_judge`, score None) is left out of it, Kuiper and the wasted-effort
ratio, and counted in `needs_judge`; `anls_accuracy` (MADQA's ANLS*-based accuracy: ANLS* >=
0.5) covers every row, as MADQA's harness does without a judge.

Page F1 and Doc F1 are `None` (n/a) where the gold cannot score them (no evidence, or
document-level evidence for Page F1); their means leave those rows out and carry `n`, the number
of rows they average, so a report can state the count. Every interval uses the same bootstrap
(`bootstrap.N_BOOT` resamples, `bootstrap.SEED`), so `eval` and `report` print the same numbers.
"""

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from rlm_docs.eval.bootstrap import N_BOOT, SEED, bootstrap_mean_ci
from rlm_docs.eval.correction import DEFAULT_SENSITIVITY, DEFAULT_SPECIFICITY, rogan_gladen
from rlm_docs.eval.effort import kuiper, kuiper_applicable, kuiper_bootstrap, wasted_effort_ratio
from rlm_docs.eval.results_row import ResultRow
from rlm_docs.eval.taxonomy import ERROR_TYPES, unchecked_comprehension
from rlm_docs.governor import axes

Row = ResultRow
NA_METRICS = ("page_f1", "doc_f1")
NEEDS_JUDGE = "needs_judge"


def decided_rows(rows: Sequence[Row]) -> list[Row]:
    """The rows with a score (all but `needs_judge` ones): what accuracy and Kuiper are over."""
    return [r for r in rows if r.get("stage") != NEEDS_JUDGE]


def effort_value(row: Mapping[str, Any], measure: str) -> float:
    """Effort of a row on `measure` (a `derived` axis from the row's other fields, e.g.
    `total_tokens` = input + output); missing counts as 0."""
    axis = axes.axis(measure)
    if axis is not None and axis.derive is not None:
        return float(axis.derive(row))
    return float(row.get(measure) or 0)


def _interval(values: Sequence[float], seed: int, n_boot: int) -> dict[str, float]:
    low, high = bootstrap_mean_ci(values, n_boot=n_boot, seed=seed)
    mean = float(np.mean(values)) if len(values) else math.nan
    return {"value": mean, "low": low, "high": high, "n": len(values)}


def _effort_and_correct(
    rows: Sequence[Mapping[str, Any]], measure: str
) -> tuple[list[float], list[float]]:
    effort = [effort_value(r, measure) for r in rows]
    correct = [float(bool(r.get("correct"))) for r in rows]
    return effort, correct


def kuiper_block(
    rows: Sequence[Mapping[str, Any]], measure: str, seed: int = SEED, n_boot: int = N_BOOT
) -> dict[str, float]:
    """Kuiper K, K/N with its bootstrap interval and the permutation p of `measure`;
    `applicable` is `effort.kuiper_applicable` (False: the report prints n/a)."""
    effort, correct = _effort_and_correct(rows, measure)
    result = kuiper(effort, correct, seed=seed)
    low, high = kuiper_bootstrap(effort, correct, n_boot=n_boot, seed=seed)
    return {
        "value": result.statistic,
        "normalized": result.normalized,
        "p_value": result.p_value,
        "low": low,
        "high": high,
        "degenerate": result.degenerate,
        "applicable": kuiper_applicable(effort, correct),
    }


def summarize(
    rows: Sequence[Row],
    *,
    judged: bool = False,
    sensitivity: float = DEFAULT_SENSITIVITY,
    specificity: float = DEFAULT_SPECIFICITY,
    n_boot: int = N_BOOT,
    seed: int = SEED,
    with_kuiper: bool = True,
) -> dict[str, Any]:
    """Aggregates of `rows`; Kuiper `low`/`high` bound K/N, the others bound the value itself."""
    n = len(rows)
    out: dict[str, Any] = {"n": n}
    decided = decided_rows(rows)
    out["accuracy"] = _interval([float(r.get("score") or 0) for r in decided], seed, n_boot)
    out["accuracy"]["correct"] = sum(1 for r in decided if r.get("correct"))
    out["needs_judge"] = n - len(decided)
    out["anls"] = _interval([float(r.get("anls") or 0) for r in rows], seed, n_boot)
    anls_hits = [float(float(r.get("anls") or 0) >= 0.5) for r in rows]
    out["anls_accuracy"] = _interval(anls_hits, seed, n_boot)
    citation = {
        "page_f1": [r.get("page_f1") for r in rows],
        "doc_f1": [r.get("doc_f1") for r in rows],
    }
    for name in NA_METRICS:
        values = [float(v) for v in citation[name] if v is not None]
        out[name] = _interval(values, seed, n_boot)
    if judged:
        k = len(decided)
        rg = rogan_gladen(out["accuracy"]["value"] if k else 0.0, k, sensitivity, specificity)
        out["accuracy_corrected"] = {"value": rg.estimate, "low": rg.low, "high": rg.high}
    for name in (a.name for a in axes.measures()):
        out[name] = _interval([effort_value(r, name) for r in rows], seed, n_boot)
    out["cost_usd"] = _interval([float(r.get("cost_usd") or 0) for r in rows], seed, n_boot)
    out["total_cost_usd"] = sum(float(r.get("cost_usd") or 0) for r in rows)
    out["total_wall_s"] = sum(float(r.get("wall_s") or 0) for r in rows)
    out["judge_calls"] = sum(int(r.get("judge_calls") or 0) for r in rows)
    out["total_judge_cost_usd"] = sum(float(r.get("judge_cost_usd") or 0) for r in rows)
    if with_kuiper:
        out["kuiper_steps"] = kuiper_block(decided, "steps", seed, n_boot)
        out["kuiper_tokens"] = kuiper_block(decided, "total_tokens", seed, n_boot)
        out["wasted_effort_steps"] = wasted_effort_ratio(*_effort_and_correct(decided, "steps"))
    # the taxonomy of answers given: a failed or missing question is counted in `status`,
    # never as a refusal (an outage is not the model declining)
    answered = [r for r in rows if r.get("status") not in ("failed", "missing")]
    out["errors"] = {t: sum(1 for r in answered if r.get("error_type") == t) for t in ERROR_TYPES}
    # comprehension errors of questions with no page evidence: nothing to check them against
    out["errors_unchecked"] = sum(1 for r in rows if unchecked_comprehension(r))
    out["stages"] = {}
    for row in rows:
        stage = str(row.get("stage") or "missing")
        out["stages"][stage] = out["stages"].get(stage, 0) + 1
    out["status"] = {
        s: sum(1 for r in rows if r.get("status") == s) for s in ("ok", "failed", "missing")
    }
    return out


# How each workload scorer (a row's `stage` is the scorer's name) scores an answer.
WORKLOAD_SCORERS = {
    "oolong": "oolong scorer: exact labels, 0.75^|error| partial credit for counts",
    "oolong-pairs": "oolong-pairs scorer: F1 over the (a, b) pairs",
    "needle": "needle scorer: F1 over the planted values",
}
# Stages that decide a row whatever scored it (no answer, refusal of an unanswerable question).
NEUTRAL_STAGES = ("unanswerable", "empty", "missing", NEEDS_JUDGE)
STRING_STAGES = ("too_long", "numeric", "exact", "anls", "judge")


def scoring_method(stages: Mapping[str, int], judged: bool = False) -> str:
    """How a run's accuracy was scored, from the count of its rows per `stage` (the one place
    `eval`'s summary line and `report`'s notes take it from): the workload scorer(s) used, the
    numeric/ANLS*/judge stages, or both with their question counts for a mixed run."""
    strings = "numeric stage, then judge" if judged else "numeric + ANLS* ≥ 0.5 stages, no judge"
    workloads = sorted(s for s in stages if s not in NEUTRAL_STAGES and s not in STRING_STAGES)
    if not workloads:
        return strings
    names = [WORKLOAD_SCORERS.get(w, f"{w} scorer") for w in workloads]
    n_strings = sum(n for s, n in stages.items() if s in STRING_STAGES)
    if not n_strings:
        return "; ".join(names) + "; accuracy = mean score"
    parts = [f"{name} ({stages[w]} q)" for name, w in zip(names, workloads, strict=True)]
    return f"mixed: {'; '.join(parts)}; {strings} ({n_strings} q); accuracy = mean score"


def headline_accuracy(summary: Mapping[str, Any]) -> tuple[dict[str, float], str]:
    """The one accuracy a run is reported with, and how it was measured: Rogan–Gladen corrected
    for judged runs, else the stages that scored its rows (`scoring_method`)."""
    if "accuracy_corrected" in summary:
        return summary["accuracy_corrected"], "judge, Rogan–Gladen corrected, delta-method CI"
    return summary["accuracy"], scoring_method(summary.get("stages") or {}) + "; bootstrap CI"


def decided_text(summary: Mapping[str, Any], run_dir: str = "RUN_DIR") -> str:
    """`9/11 decided; 12 need --judge (rlm-docs rescore RUN_DIR --judge MODEL)` when some
    questions have prose golds no judge scored, else ''."""
    left = summary.get("needs_judge") or 0
    if not left:
        return ""
    acc = summary["accuracy"]
    return (
        f"{acc.get('correct', 0)}/{acc['n']} decided; {left} need --judge "
        f"(rlm-docs rescore {run_dir} --judge MODEL)"
    )


def citation_f1_text(summary: Mapping[str, Any]) -> str:
    """`page F1 …, doc F1 …` for a one-line summary, each with its count when some questions
    have no evidence to score it (n/a when none has)."""
    parts = []
    for key, label, what in (("page_f1", "page", "page"), ("doc_f1", "doc", "document")):
        block = summary[key]
        text = "n/a" if not block["n"] else f"{block['value']:.3f}"
        if block["n"] < summary["n"]:
            text += f" (n={block['n']} with {what} evidence)"
        parts.append(f"{label} F1 {text}")
    return ", ".join(parts)


def by_group(
    rows: Sequence[Row], key: Callable[[Row], str], **kwargs: Any
) -> dict[str, dict[str, Any]]:
    """`summarize` per value of `key(row)` (e.g. hop type, question type, domain), in value
    order: numbers by size (8192 before 32768), then text alphabetically."""
    groups: dict[str, list[Row]] = {}
    for row in rows:
        groups.setdefault(key(row) or "unknown", []).append(row)
    return {name: summarize(groups[name], **kwargs) for name in sorted(groups, key=_value_order)}


def _value_order(name: str) -> tuple[int, float, str]:
    """Sort key of a group's value: numeric values (`8192`, `1,024`, `0.5`) by size first."""
    try:
        number = float(name.replace(",", ""))
    except ValueError:
        return 1, 0.0, name
    return (0, number, name) if math.isfinite(number) else (1, 0.0, name)
