"""`build_report`: one comparison table per set of runs (markdown + HTML), subsets, and plots.

Every question of a run's question list is a row (missing predictions count as wrong), so the
denominators of all runs are their full question sets. Runs over different question sets
(another file, another `--limit`) are compared only on the questions they all share, and the
report says so and gives each run on its own set in a last table. Each run's note says how its
accuracy was scored (`aggregate.scoring_method`: the workload scorers, the numeric and
ANLS* >= 0.5 stages or the judge, from the rows' `stage`). A breakdown with no value for any
question (e.g. no domains) is left out.
"""

import base64
import html
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlm_docs.atomic import atomic_write_text
from rlm_docs.errors import DatasetError
from rlm_docs.eval import plots
from rlm_docs.eval.aggregate import (
    by_group,
    decided_rows,
    decided_text,
    effort_value,
    headline_accuracy,
    scoring_method,
    summarize,
)
from rlm_docs.eval.budget_share import accuracy_vs_share_used
from rlm_docs.eval.coverage import corpus_coverage
from rlm_docs.eval.decomposition_report import decomposition_part
from rlm_docs.eval.effort import effort_correlations
from rlm_docs.eval.filters import row_field
from rlm_docs.eval.paired import paired_runs
from rlm_docs.eval.results_row import ResultRow
from rlm_docs.eval.rundir import load_run
from rlm_docs.eval.scoring import SCORING_VERSION
from rlm_docs.eval.step_limit_report import exact_curves, step_limit_sections
from rlm_docs.eval.step_limits import is_sweep, load_step_limits
from rlm_docs.governor import axes


@dataclass
class ReportedRun:
    """One run as the report sees it."""

    label: str
    path: Path
    manifest: dict[str, Any]
    rows: list[ResultRow]
    summary: dict[str, Any]
    series: str = ""  # the label without its workload part: one line of a scaling plot
    part: tuple[str, int] | None = None  # (workload, target tokens) of all its questions
    # a step-limit sweep (`eval --max-steps 1,2,4`): {limit: that limit's rows}; the run
    # itself is the longest limit
    exact_steps: dict[int, list[ResultRow]] | None = None

    def __post_init__(self) -> None:
        self.series = self.series or self.label


def _pct(x: float) -> str:
    return "n/a" if x is None or math.isnan(x) else f"{x:.1%}"


def _ci(block: dict[str, float], fmt: str = "pct") -> str:
    show = _pct if fmt == "pct" else (lambda v: f"{v:.3f}")
    if math.isnan(block["value"]):
        return "n/a"
    return f"{show(block['value'])} [{show(block['low'])}, {show(block['high'])}]"


def _f1(block: dict[str, float], n: int, with_ci: bool = True) -> str:
    """An F1 mean, with the number of questions it covers when some are n/a."""
    if not block.get("n"):
        return "n/a"
    text = _ci(block, "num") if with_ci else f"{block['value']:.3f}"
    return text if block["n"] == n else f"{text} (n={block['n']})"


def _kuiper(block: dict[str, Any]) -> str:
    """K/N [CI] (K, p); n/a where `effort.kuiper_applicable` says K means nothing (constant
    effort or correctness), as in the per-measure table."""
    if math.isnan(block["value"]) or not block.get("applicable", True):
        return "n/a"
    return (
        f"{block['normalized']:.3f} [{block['low']:.3f}, {block['high']:.3f}] "
        f"(K={block['value']:.2f}, p={block['p_value']:.3f})"
    )


def _subset_acc(run: ReportedRun, hop: str) -> str:
    rows = [r for r in decided_rows(run.rows) if r.get("hop_type") == hop]
    if not rows:
        return "n/a"
    return f"{sum(float(r.get('score') or 0) for r in rows) / len(rows):.1%} (n={len(rows)})"


def _system_label(manifest: dict[str, Any]) -> str:
    system = str(manifest.get("system"))
    if (manifest.get("options") or {}).get("sub_calls") is False:
        system += " --no-sub-calls"  # the ablation is a different system in every table
    return f"{system} / {manifest.get('model')}"


def _settings(manifest: dict[str, Any]) -> dict[str, Any]:
    """What a run did apart from its data: sub-model, judge, budget and options, flat, keyed as
    their eval flags (`max-steps`). One limit of a step-limit run (`eval --max-steps 1,2,4`)
    was cut at its own limit, though its budget records the longest: that limit is its
    max-steps."""
    flat: dict[str, Any] = {"sub-model": manifest.get("sub_model"), "judge": manifest.get("judge")}
    for group in ("budget", "options"):
        for key, value in (manifest.get(group) or {}).items():
            flat[key.replace("_", "-")] = value
    if manifest.get("step_limit") is not None:
        flat["max-steps"] = manifest["step_limit"]
    return flat


def _differing(manifests: list[dict[str, Any]]) -> list[str]:
    """The settings that take more than one value across `manifests`, in a stable order."""
    values: dict[str, set[str]] = {}
    for m in manifests:
        for key, value in _settings(m).items():
            values.setdefault(key, set()).add(json.dumps(value, sort_keys=True))
    return sorted(k for k, v in values.items() if len(v) > 1)


def run_part(rows: list[ResultRow]) -> tuple[str, int] | None:
    """(workload, target tokens) shared by every question of a run (a generated workload at one
    length), else None."""
    parts = {(row_field(r, "workload"), row_field(r, "target_tokens")) for r in rows}
    if len(parts) != 1:
        return None
    workload, tokens = parts.pop()
    return (str(workload), int(tokens)) if workload and isinstance(tokens, int) else None


def _part_text(part: tuple[str, int] | None) -> str:
    return "" if part is None else f" · {part[0]} {part[1]:,}"


def _summary(manifest: dict[str, Any], rows: list[ResultRow]) -> dict[str, Any]:
    return summarize(
        rows,
        judged=bool(manifest.get("judge")),
        sensitivity=manifest.get("judge_sensitivity", 0.98),
        specificity=manifest.get("judge_specificity", 1.0),
    )


def load_runs(
    paths: list[str | os.PathLike[str]], labels: list[str | None] | None = None
) -> list[ReportedRun]:
    """Runs with their rows and summaries, labelled `labels` where given (None: default to
    system / model, plus its workload and length when the runs span several, plus its
    directory name when that is still ambiguous); DatasetError names a directory that is not a
    run. Whatever the label, a run's `series` is its system / model plus the settings that
    differ between the runs (`· max-steps 4`, e.g. the budget axis of a sweep; always a
    step-limit run's own limit): one line per series in the scaling figure, so runs of
    one series at several lengths join and runs that differ stay apart."""
    loaded = []
    exact: dict[Path, dict[int, list[ResultRow]]] = {}
    for p in paths:
        if is_sweep(p):
            limits = load_step_limits(p)
            manifest, rows = next(iter(limits.values()))  # the longest limit
            exact[Path(p)] = {limit: r for limit, (_, r) in limits.items()}
        else:
            manifest, rows = load_run(p)
        loaded.append((Path(p), manifest, rows, run_part(rows)))
    if not loaded:
        raise DatasetError("report: no run directories given")
    several = len({part for *_, part in loaded}) > 1
    differing = _differing([manifest for _, manifest, _, _ in loaded])
    if "max-steps" not in differing and any(m.get("step_limit") for _, m, _, _ in loaded):
        differing.append("max-steps")  # a limit's budget records the longest: say its own
    runs: list[ReportedRun] = []
    taken: set[tuple[str, tuple[str, int] | None]] = set()
    for path, manifest, rows, part in loaded:
        settings = _settings(manifest)
        series = _system_label(manifest) + "".join(  # a setting the run lacks is not shown
            f" · {key} {settings[key]}" for key in differing if settings.get(key) is not None
        )
        if (series, part) in taken:
            series = f"{series} ({path.name})"
        taken.add((series, part))
        label = series + (_part_text(part) if several else "")
        if labels and labels[len(runs)]:
            label = str(labels[len(runs)])
        summary = _summary(manifest, rows)
        runs.append(
            ReportedRun(label, path, manifest, rows, summary, series, part, exact.get(path))
        )
    return runs


def shared_questions(
    runs: list[ReportedRun], disjoint: bool = False
) -> tuple[list[ReportedRun], str | None]:
    """The runs restricted to the questions every run of the same workload part answered, and
    a note saying so; the runs themselves (the same list) when no part's runs had to be
    restricted. Comparing accuracies over different question sets would compare the sets, not
    the systems; runs of a workload at different lengths are points of one curve, not rivals.
    Runs sharing no question are refused, unless `disjoint` (a sweep over data sets): then each
    keeps its own set."""
    parts = list(dict.fromkeys(run.part for run in runs))
    out: dict[int, ReportedRun] = {}
    notes = []
    for part in parts:
        mine = [run for run in runs if run.part == part]
        kept, note = _shared(mine, _part_text(part).strip(" ·"), disjoint)
        out |= {id(old): new for old, new in zip(mine, kept, strict=True)}
        notes += [note] if note else []
    if len(parts) > 1:
        sizes = ", ".join(f"{run.label}: {len(run.rows)}" for run in runs)
        notes.insert(
            0,
            f"- The runs cover different data sets ({sizes} questions): each row is on its own "
            "questions, so a difference between rows of different data sets is also a "
            "difference of questions; runs of one workload at several lengths are the points "
            "of its accuracy and cost vs context length figure.",
        )
    changed = any(out[id(run)] is not run for run in runs)
    return ([out[id(run)] for run in runs] if changed else runs), ("\n".join(notes) or None)


def _shared(
    runs: list[ReportedRun], part: str, disjoint: bool
) -> tuple[list[ReportedRun], str | None]:
    sets = [{r["id"] for r in run.rows} for run in runs]
    if all(ids == sets[0] for ids in sets):
        return runs, None
    shared = set.intersection(*sets)
    sizes = ", ".join(f"{run.label}: {len(ids)}" for run, ids in zip(runs, sets, strict=True))
    if not shared and disjoint:
        return runs, (
            f"- The runs cover different data sets ({sizes} questions): each row is on its own "
            "questions, so a difference between rows of different data sets is also a "
            "difference of questions."
        )
    if not shared:
        raise DatasetError(f"report: the runs share no question ({sizes}); report them separately")
    restricted = []
    for run in runs:
        rows = [r for r in run.rows if r["id"] in shared]
        summary = _summary(run.manifest, rows)
        restricted.append(
            ReportedRun(
                run.label,
                run.path,
                run.manifest,
                rows,
                summary,
                run.series,
                run.part,
                run.exact_steps,
            )
        )
    where = f"{part}: the" if part else "The"
    note = (
        f"- {where} runs cover different question sets ({sizes} questions): the comparison, "
        f"subsets and figures use only the {len(shared)} questions all runs share; each run on "
        "its own full set is in the last table."
    )
    return restricted, note


PAIRED_TITLE = "Paired differences on shared questions"
PAIRED_NOTE = (
    "- Accuracy A − B: mean per-question score difference over the questions both runs "
    "decided; [95% paired bootstrap CI] resampling questions with both runs' scores together; "
    "p: two-sided, from the same 1000 resamples (CI inversion)."
)
MAIN_HEADERS = [
    "System",
    "N",
    "Accuracy [95% CI]",
    "ANLS* acc",
    "X-page",
    "X-doc",
    "Page F1",
    "Doc F1",
    "Kuiper steps K/N",
    "Kuiper tokens K/N",
    "Wasted effort ρ",
    "Tokens/q",
    "$ total",
    "Wall s/q",
    "Errors R/N/C/Ref",
    "Failed/Missing",
    "Corpus seen",
]


def main_table(runs: list[ReportedRun]) -> list[list[str]]:
    """The comparison table rows (one per run), as strings."""
    out = []
    for run in runs:
        s = run.summary
        acc, _ = headline_accuracy(s)
        errors = "/".join(
            str(s["errors"][t]) for t in ("retrieval", "navigation", "comprehension", "refusal")
        )
        accuracy = _ci(acc)
        if s.get("needs_judge"):
            accuracy += f" ({s['accuracy']['n']} decided, {s['needs_judge']} need judge)"
        out.append(
            [
                run.label,
                str(s["n"]),
                accuracy,
                _pct(s["anls_accuracy"]["value"]),
                _subset_acc(run, "cross_page"),
                _subset_acc(run, "cross_doc"),
                _f1(s["page_f1"], s["n"]),
                _f1(s["doc_f1"], s["n"]),
                _kuiper(s["kuiper_steps"]),
                _kuiper(s["kuiper_tokens"]),
                "n/a"
                if math.isnan(s["wasted_effort_steps"])
                else f"{s['wasted_effort_steps']:.2f}",
                f"{s['total_tokens']['value']:,.0f}",
                f"{s['total_cost_usd']:.4f}",
                f"{s['wall_s']['value']:.2f}",
                errors,
                f"{s['status']['failed']}/{s['status']['missing']}",
                _seen(run),
            ]
        )
    return out


def _seen(run: ReportedRun) -> str:
    """Share of the corpus a fixed-reading baseline read (`coverage`); n/a for systems that
    choose their pages (their share read is in the decomposition table)."""
    coverage = corpus_coverage(run.rows)
    return coverage.short() if coverage else "n/a"


def _coverage_notes(runs: list[ReportedRun]) -> list[str]:
    """`- LABEL: long-context saw 2.2% of the corpus (...)` per baseline run."""
    found = [(run.label, corpus_coverage(run.rows)) for run in runs]
    return [f"- {label}: {c.sentence()}." for label, c in found if c is not None]


def _accuracy_note(run: ReportedRun) -> str:
    m = run.manifest
    if m.get("scoring_version", 1) < SCORING_VERSION:
        return (
            _accuracy_how(run) + " Scored again with the current stages (the run was scored by "
            "an older rlm-docs; stored judge verdicts kept)."
        )
    return _accuracy_how(run)


def _needs_judge_note(run: ReportedRun) -> str | None:
    """How many questions had prose golds no judge scored, and how to score them."""
    text = decided_text(run.summary, str(run.path))
    if not text:
        return None
    return (
        f"- {run.label}: accuracy {text}: their gold answers are prose, which the numeric, "
        "exact and ANLS* stages cannot decide, so they are left out of Accuracy (ANLS* acc "
        "counts them)."
    )


def _accuracy_how(run: ReportedRun) -> str:
    m = run.manifest
    method = scoring_method(run.summary.get("stages") or {}, judged=bool(m.get("judge")))
    if not m.get("judge"):
        # a workload method says "accuracy = mean score" itself
        lead = "" if "accuracy =" in method else "accuracy = "
        return f"- {run.label}: {lead}{method}; bootstrap CI."
    return (
        f"- {run.label}: accuracy = ANLS*/judge score ({m['judge']}; {method}), Rogan–Gladen "
        f"corrected with sensitivity {m.get('judge_sensitivity')} and specificity "
        f"{m.get('judge_specificity')} (raw {_ci(run.summary['accuracy'])}; delta-method CI)."
    )


def _errors_note(runs: list[ReportedRun]) -> str:
    """The error legend; C names the comprehension errors that had no gold page to check."""
    unchecked = [(r.label, r.summary.get("errors_unchecked", 0)) for r in runs]
    c = "C = comprehension (gold page cited, wrong answer)"
    if any(n for _, n in unchecked):
        counts = ", ".join(f"{label}: {n}" for label, n in unchecked)
        c = (
            "C = comprehension (gold page cited, wrong answer; or no page evidence to check — "
            "no evidence, or document-level only with a gold document cited; such C: "
            f"{counts})"
        )
    return (
        "- Errors: R = retrieval (no gold document cited), N = navigation (gold document, no "
        f"gold page), {c}, Ref = refusal/no answer; failed and missing questions are counted "
        "in Failed/Missing only."
    )


def _md(headers: list[str], rows: list[list[str]]) -> str:
    clean = [[c.replace("|", "\\|") for c in r] for r in rows]
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in clean])


def _html(headers: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


PAIRED_HEADERS = ["A", "B", "N", "Accuracy A − B [95% CI]", "p"]


def paired_rows(runs: list[ReportedRun]) -> list[list[str]]:
    """One row per pair of runs of the same workload part (compared on their shared
    questions, `paired.paired_runs`): the accuracy difference, its paired bootstrap interval
    and two-sided p-value."""
    out = []
    for i, a in enumerate(runs):
        for b in runs[i + 1 :]:
            if a.part != b.part:
                continue
            d = paired_runs(a.rows, b.rows)
            if not d["n"]:
                continue
            out.append(
                [
                    a.label,
                    b.label,
                    str(d["n"]),
                    f"{d['value']:+.1%} [{d['low']:+.1%}, {d['high']:+.1%}]",
                    f"{d['p_value']:.3f}",
                ]
            )
    return out


SUBSET_HEADERS = ["Subset", "N", "Accuracy [95% CI]", "Page F1", "Doc F1", "Steps/q", "Tokens/q"]
_GROUPS = (("hop type", "hop_type"), ("question type", "question_type"), ("domain", "domain"))
# Question fields broken down whenever a run's questions carry them (MMLongBench-Doc's kinds).
_OPTIONAL_GROUPS = ("doc_type",)


def _group_name(value: Any) -> str:
    """A field value as a table label: JSON spelling for booleans and null (`true`, `null`)."""
    return json.dumps(value) if value is None or isinstance(value, bool) else str(value)


def _groups(runs: list[ReportedRun], by: list[str]) -> list[tuple[str, str]]:
    """The (title, field) breakdowns: the fixed ones, doc_type when present, and `by`;
    DatasetError naming a `--by` field that no question of any run has."""
    present = {k for r in runs for row in r.rows for k in (*row, *(row.get("fields") or {}))}
    groups = list(_GROUPS) + [(k.replace("_", " "), k) for k in _OPTIONAL_GROUPS if k in present]
    for key in by:
        if key not in present:
            raise DatasetError(f"report --by {key}: no question of these runs has that field")
        if key not in [k for _, k in groups]:
            groups.append((key, key))
    return groups


# Group names of rows without a value (`by_group`'s "unknown" for "", `_group_name`'s "null").
_NO_VALUE = {"unknown", "null"}


def _subset_rows(run: ReportedRun, key: str) -> list[list[str]]:
    """One row per value of `key`; none when no question has a value (a lone "unknown" row
    would only repeat the comparison)."""
    groups = by_group(run.rows, lambda r: _group_name(row_field(r, key)), with_kuiper=False)
    if set(groups) <= _NO_VALUE:
        return []
    return [
        [
            name,
            str(s["n"]),
            _ci(s["accuracy"]),
            _f1(s["page_f1"], s["n"], with_ci=False),
            _f1(s["doc_f1"], s["n"], with_ci=False),
            f"{s['steps']['value']:.2f}",
            f"{s['total_tokens']['value']:,.0f}",
        ]
        for name, s in groups.items()
    ]


def _correlation_rows(run: ReportedRun) -> list[list[str]]:
    columns = {a.name: [effort_value(r, a.name) for r in run.rows] for a in axes.measures()}
    return [
        [a, b, "n/a" if math.isnan(rho) else f"{rho:.2f}"]
        for (a, b), rho in effort_correlations(columns).items()
    ]


FIGURES = (
    ("cumulative_differences.png", "Cumulative differences (effort calibration)"),
    ("accuracy_vs_cost.png", "Accuracy vs cost"),
    ("accuracy_vs_step_limit.png", "Accuracy vs step limit"),
    ("effort_distributions.png", "Effort of correct vs wrong answers"),
)
# drawn when some run has budget data (`eval.budget_share`)
SHARE_FIGURE = ("accuracy_vs_share_used.png", "Accuracy vs share of the budget used")


def _sections(
    runs: list[ReportedRun], title: str, by: list[str] | None = None
) -> list[tuple[str, list[str], list[list[str]]]]:
    out = [(title, MAIN_HEADERS, main_table(runs))]
    groups = _groups(runs, list(by or []))
    for run in runs:
        for title, key in groups:
            rows = _subset_rows(run, key)
            if rows:
                out.append((f"{run.label}: by {title}", SUBSET_HEADERS, rows))
        out.append(
            (
                f"{run.label}: Spearman correlation of effort measures",
                ["A", "B", "rho"],
                _correlation_rows(run),
            )
        )
    return out


def build_report(
    paths: list[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    by: list[str] | None = None,
    labels: list[str | None] | None = None,
    disjoint: bool = False,
) -> dict[str, Any]:
    """Write report.md, report.html, summary.json and the PNG figures into `out`; `by` adds a
    breakdown per value of each named question field (e.g. `text_answerable`); `labels` name
    the runs (a sweep's cell names); `disjoint` reports runs that share no question each on its
    own set (see `shared_questions`)."""
    full = load_runs(paths, labels)
    _groups(full, list(by or []))  # an unknown field fails before anything is written
    runs, shared_note = shared_questions(full, disjoint)
    restricted = runs is not full  # compared on the shared questions only
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    named = [(r.label, r.rows) for r in runs]
    scored = [(r.label, decided_rows(r.rows)) for r in runs]  # correctness is known
    plots.cumulative_differences(scored, target / FIGURES[0][0])
    plots.accuracy_vs_cost(named, [r.summary for r in runs], target / FIGURES[1][0])
    exact = {r.label: r.exact_steps for r in runs if r.exact_steps}
    plots.accuracy_vs_step_limit(scored, target / FIGURES[2][0], exact_curves(exact))
    plots.effort_distributions(scored, target / FIGURES[3][0])
    shares = [SHARE_FIGURE] if accuracy_vs_share_used(scored, target / SHARE_FIGURE[0]) else []
    decomposition, drawn, not_drawn = decomposition_part(runs, target)
    comparison = "Comparison"
    if restricted and len({r.part for r in runs}) == 1:
        comparison = f"Comparison on the {runs[0].summary['n']} shared questions"
    sections = _sections(runs, comparison, by)
    paired = paired_rows(runs)
    pairs = [(PAIRED_TITLE, PAIRED_HEADERS, paired)] if paired else []
    sections[1:1] = pairs + decomposition + step_limit_sections(exact)
    if restricted:
        sections.append(("Each run on its full question set", MAIN_HEADERS, main_table(full)))
    notes = (
        (shared_note.split("\n") if shared_note else [])
        + [_accuracy_note(r) for r in runs]
        + _coverage_notes(runs)
        + [note for r in runs if (note := _needs_judge_note(r))]
        + [
            "- ANLS* acc: share of all questions with ANLS* >= 0.5 over the answer's values "
            "(MADQA's ANLS*-based accuracy, as its harness reports it without a judge).",
            _errors_note(runs),
            "- Kuiper K/N: range of the cumulative-difference curve over questions ordered by "
            "effort, tied efforts as one block (order-independent); p from 1000 permutations; "
            "lower is better calibrated; [95% bootstrap CI of K/N]; n/a when every question has "
            "the same effort or the same correctness (as in the per-measure table).",
            "- Wasted effort ρ (MADQA): mean steps of wrong answers / mean steps of correct ones "
            "(> 1: grinds on what it cannot solve; < 1: fails fast); questions with no steps left out.",
            "- Missing or failed predictions count as wrong with zero effort.",
            "- Page F1 / Doc F1: n/a for questions whose gold has no evidence pages (none, or "
            "document-level `page: null`) / no evidence; (n=…) is how many questions a mean covers.",
        ]
    )
    md = ["# rlm-docs evaluation report", ""]
    page = [
        "<!doctype html><meta charset='utf-8'><title>rlm-docs evaluation report</title>",
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;"
        "margin-bottom:1.5em}td,th{border:1px solid #ccc;padding:4px 8px;font-size:13px}"
        "</style><h1>rlm-docs evaluation report</h1>",
    ]
    notes_after = {comparison: notes, decomposition[0][0]: not_drawn, PAIRED_TITLE: [PAIRED_NOTE]}
    for title, headers, rows in sections:
        md += [f"## {title}", "", _md(headers, rows), ""]
        page += [f"<h2>{html.escape(title)}</h2>", _html(headers, rows)]
        if title in notes_after:
            items = notes_after[title]
            md += items + [""]
            page.append("<ul>" + "".join(f"<li>{html.escape(n[2:])}</li>" for n in items) + "</ul>")
    for name, title in [*FIGURES, *shares, *drawn]:
        md += [f"## {title}", "", f"![{title}]({name})", ""]
        page += [f"<h2>{html.escape(title)}</h2>", _img(target / name, title)]
    atomic_write_text(target / "report.md", "\n".join(md))
    atomic_write_text(target / "report.html", "\n".join(page) + "\n")
    summary = {r.label: {"path": str(r.path), **r.summary} for r in runs}
    if restricted:
        for r in full:
            summary[r.label]["full_question_set"] = r.summary
    atomic_write_text(target / "summary.json", json.dumps(_nan_to_none(summary), indent=2))
    return {"markdown": _md(MAIN_HEADERS, main_table(runs)), "notes": notes, "runs": runs}


def _img(path: Path, title: str) -> str:
    """An <img> carrying the PNG itself (a data URI), so report.html is one self-contained
    file that can be mailed or archived without its figures."""
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f"<img src='data:image/png;base64,{data}' alt='{html.escape(title)}'>"


def _nan_to_none(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _nan_to_none(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_nan_to_none(v) for v in value]
    return value
