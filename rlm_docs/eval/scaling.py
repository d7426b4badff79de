"""The decomposition study: accuracy and cost against context length, per system.

`scaling_study` generates each workload (`rlm_docs.bench`) at several token targets, runs every
system on every length through the ordinary `run_eval` (same governor, ledger and scoring as
`rlm-docs eval`), and returns one row per (workload, length, system). `plot_scaling` draws
accuracy and tokens per question against context length on a log2 axis. The benchmark script
(`benchmarks/bench_scaling.py`) and the notebook (`notebooks/decomposition_study.ipynb`) are
thin callers of these two functions.
"""

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rlm_docs.atomic import atomic_write_bytes
from rlm_docs.bench.make import make_bench
from rlm_docs.eval.rundir import load_run
from rlm_docs.eval.runner import EvalSettings, run_eval
from rlm_docs.governor import Budget
from rlm_docs.systems import SYSTEM_NAMES

# The systems the study compares, in plot order; those not registered (yet) are left out.
STUDY_SYSTEMS = tuple(
    s for s in ("rlm", "long-context", "map-reduce", "bm25-agent") if s in SYSTEM_NAMES
)


def _mean(rows: Sequence[dict[str, Any]], key: str) -> float:
    return sum(float(r.get(key) or 0) for r in rows) / max(len(rows), 1)


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
        source = {"filler": filler} if workload == "needle" else {"data": data}
        manifest = make_bench(
            workload,
            root / "bench" / workload,
            seed=seed,
            tokens=list(lengths),
            questions=questions,
            **source,
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
                    {
                        "workload": workload,
                        "target_tokens": part["tokens"],
                        "context_tokens": part["rendered_tokens"],
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
    """One row of panels per workload: accuracy, and tokens per question (log scale), against
    context tokens on a log2 axis, one line per system. Written atomically as PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    workloads = list(dict.fromkeys(r["workload"] for r in rows))
    systems = list(dict.fromkeys(r["system"] for r in rows))
    fig, axes = plt.subplots(len(workloads), 2, figsize=(10, 3.6 * len(workloads)), squeeze=False)
    styles = [("o", "-"), ("s", "--"), ("^", "-."), ("D", ":")]
    for i, workload in enumerate(workloads):
        for k, system in enumerate(systems):
            marker, line = styles[k % len(styles)]
            style = {"marker": marker, "linestyle": line, "label": system, "alpha": 0.85}
            mine = sorted(
                (r for r in rows if r["workload"] == workload and r["system"] == system),
                key=lambda r: r["context_tokens"],
            )
            if not mine:
                continue
            x = [r["context_tokens"] for r in mine]
            axes[i][0].plot(x, [r["accuracy"] for r in mine], **style)
            axes[i][1].plot(x, [max(r["tokens"], 1) for r in mine], **style)
        axes[i][0].set_ylim(-0.03, 1.03)
        axes[i][0].set_ylabel("accuracy (mean score)")
        axes[i][1].set_ylabel("tokens per question")
        axes[i][1].set_yscale("log")
        for j, title in enumerate(("accuracy", "cost")):
            axes[i][j].set_xscale("log", base=2)
            axes[i][j].set_xlabel("context length (cl100k tokens, log2)")
            axes[i][j].set_title(f"{workload}: {title} vs context length")
            axes[i][j].grid(True, alpha=0.3)
        axes[i][0].legend(fontsize=8)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    plt.close(fig)
    target = Path(path)
    atomic_write_bytes(target, buffer.getvalue())
    return target
