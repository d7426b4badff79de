"""The decomposition study: accuracy and cost against context length, per system.

`scaling_study` generates each workload (`rlm_docs.bench`) at several token targets, runs every
system on every length through the ordinary `run_eval` (same governor, ledger and scoring as
`rlm-docs eval`), and returns one row per (workload, length, system). `plot_scaling` draws
accuracy and tokens per question against context length on a log2 axis. The benchmark script
(`benchmarks/bench_scaling.py`) and the notebook (`notebooks/decomposition_study.ipynb`) are
thin callers of these two functions.
"""

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rlm_docs.bench.make import make_bench
from rlm_docs.eval.results_row import ResultRow
from rlm_docs.eval.rundir import load_run
from rlm_docs.eval.runner import EvalSettings, run_eval
from rlm_docs.governor import Budget
from rlm_docs.systems import SYSTEM_NAMES

# The systems the study compares, in plot order; those not registered (yet) are left out.
STUDY_SYSTEMS = tuple(
    s for s in ("rlm", "long-context", "map-reduce", "bm25-agent") if s in SYSTEM_NAMES
)


def _mean(rows: Sequence[Mapping[str, Any]], key: str) -> float:
    return sum(float(r.get(key) or 0) for r in rows) / max(len(rows), 1)


def scaling_row(
    workload: str,
    target_tokens: int,
    context_tokens: float,
    system: str,
    results: Sequence[ResultRow],
    summary: dict[str, Any],
) -> dict[str, Any]:
    """One (workload, length, system) point of the study from a run's rows and their
    `summarize` summary; `report` builds its context-length figure from the same rows."""
    return {
        "workload": workload,
        "target_tokens": target_tokens,
        "context_tokens": context_tokens,
        "system": system,
        "n": summary["n"],
        "accuracy": summary["accuracy"]["value"],
        "accuracy_low": summary["accuracy"]["low"],
        "accuracy_high": summary["accuracy"]["high"],
        "sub_calls": _mean(results, "sub_calls"),
        "steps": _mean(results, "steps"),
        "tokens": _mean(results, "total_tokens"),
        "cost_usd": summary["total_cost_usd"] / max(summary["n"], 1),
        "wall_s": _mean(results, "wall_s"),
        "failed": summary["status"]["failed"],
    }


def scaling_study(
    out: str | Path,
    *,
    workloads: Sequence[str] = ("oolong", "needle"),
    lengths: Sequence[int] = (2**13, 2**15, 2**17),
    systems: Sequence[str] = STUDY_SYSTEMS,
    model: str = "offline",
    questions: int = 10,
    seed: int = 0,
    data: str | Path | None = None,
    filler: str | Path | None = None,
    budget: Budget | None = None,
    workers: int = 2,
) -> list[dict[str, Any]]:
    """Generate, run and summarise; run directories go under `out/runs/`."""
    root = Path(out)
    rows = []
    for workload in workloads:
        needle = workload == "needle"
        manifest = make_bench(
            workload,
            root / "bench" / workload,
            seed=seed,
            tokens=list(lengths),
            questions=questions,
            data=None if needle else data,
            filler=filler if needle else None,
        )
        for part in manifest["parts"]:
            base = root / "bench" / workload
            for system in systems:
                run_dir = root / "runs" / f"{workload}-{part['tokens']}-{system}"
                settings = EvalSettings(
                    dataset=base / part["questions"],
                    corpus=base / part["corpus"],
                    system=system,
                    model=model,
                    out=run_dir,
                    budget=budget or Budget(),
                    workers=workers,
                    progress=False,
                )
                summary = run_eval(settings)
                _, results = load_run(run_dir)
                rows.append(
                    scaling_row(
                        workload, part["tokens"], part["rendered_tokens"], system, results, summary
                    )
                )
    return rows


def format_rows(rows: Sequence[dict[str, Any]]) -> str:
    """The study as a fixed-width text table."""
    head = (
        f"{'workload':<13}{'target':>9}{'context':>9}  {'system':<13}{'n':>3}{'accuracy':>10}"
        f"{'sub-calls':>10}{'tokens/q':>11}{'$/q':>9}{'s/q':>7}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r['workload']:<13}{r['target_tokens']:>9}{r['context_tokens']:>9}  "
            f"{r['system']:<13}{r['n']:>3}{r['accuracy']:>10.1%}{r['sub_calls']:>10.1f}"
            f"{r['tokens']:>11.0f}{r['cost_usd']:>9.4f}{r['wall_s']:>7.2f}"
        )
    return "\n".join(lines)


def plot_scaling(rows: Sequence[dict[str, Any]], path: str | Path) -> Path:
    """One row of panels per workload: accuracy (95% CI bars), tokens per question (log scale)
    and, when any call cost money, dollars per question, against context tokens on a log2 axis
    (ticks at powers of two), one line per system in the shared `plots.series_style` (so a
    system identical to another stays visible) and one legend below the panels, off the data.
    Written atomically as PNG."""
    import matplotlib.pyplot as plt

    from rlm_docs.eval.plots import power_of_two, save_png, series_style

    workloads = list(dict.fromkeys(r["workload"] for r in rows))
    systems = list(dict.fromkeys(r["system"] for r in rows))
    panels = [("accuracy", "accuracy (mean score)"), ("tokens", "tokens per question")]
    if any(r["cost_usd"] > 0 for r in rows):
        panels.append(("cost_usd", "dollars per question"))
    fig, axes = plt.subplots(
        len(workloads),
        len(panels),
        figsize=(5 * len(panels), 3.6 * len(workloads) + 0.6),
        squeeze=False,
    )
    for i, workload in enumerate(workloads):
        for k, system in enumerate(systems):
            style = series_style(k, len(systems))
            mine = sorted(
                (r for r in rows if r["workload"] == workload and r["system"] == system),
                key=lambda r: r["context_tokens"],
            )
            if not mine:
                continue
            x = [r["context_tokens"] for r in mine]
            acc = [r["accuracy"] for r in mine]
            err = [
                [a - r["accuracy_low"] for a, r in zip(acc, mine, strict=True)],
                [r["accuracy_high"] - a for a, r in zip(acc, mine, strict=True)],
            ]
            axes[i][0].errorbar(x, acc, yerr=err, capsize=3, label=system, **style)
            axes[i][1].plot(x, [max(r["tokens"], 1) for r in mine], **style)
            if len(panels) == 3:
                axes[i][2].plot(x, [r["cost_usd"] for r in mine], **style)
        axes[i][0].set_ylim(-0.03, 1.03)
        axes[i][1].set_yscale("log")
        for j, (key, label) in enumerate(panels):
            ax = axes[i][j]
            ax.set_ylabel(label)
            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_formatter(power_of_two)
            ax.set_xlabel("context length (cl100k tokens, log2 scale)")
            ax.set_title(f"{workload}: {'accuracy' if key == 'accuracy' else 'cost'}")
            ax.grid(True, alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 4), fontsize=9)
    fig.tight_layout(rect=(0, 0.6 / fig.get_figheight(), 1, 1))
    save_png(fig, path)
    return Path(path)
