"""`rlm-docs sweep SPEC.toml --out DIR`: a grid of evals, one resumable run directory per cell.

The spec (`rlm_docs.cli.sweep_spec`) expands into cells, each checked by eval's own parser and
turned into the `EvalSettings` `rlm-docs eval` would run with the same flags; the sweep itself
(skipping finished cells, resuming the rest with their failed questions again, one writer lock,
one combined report in `DIR/report/`) is `rlm_docs.eval.sweep.run_sweep`, which this command
calls, printing each cell's eval summary line. A sweep with failed questions left exits 3, as
eval does. Ctrl-C stops at once and every cell stays resumable: run the same command again.

`--dry-run` prints each cell, its question count, upper bounds on model calls and dollars
(`rlm_docs.eval.bounds`) and where each of its models' requests go, with or without the API key
(`rlm_docs.models.endpoints`), without writing or spending anything.
"""

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

from rlm_docs.cli.interrupt import Interrupted
from rlm_docs.cli.sweep_spec import Cell, Sweep, cell_args, load_sweep
from rlm_docs.errors import ConfigError
from rlm_docs.terminal_text import sanitize


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "sweep",
        help="run a grid of evals (systems x models x budgets x data) and report them together",
        description=(
            "Expand SPEC.toml into cells (one eval run directory each under DIR), run the "
            "cells not yet finished, and write one combined report to DIR/report."
        ),
    )
    p.add_argument("spec", metavar="SPEC.toml", help="sweep spec (see docs/guide/sweeps.md)")
    p.add_argument("--out", required=True, metavar="DIR", help="sweep directory")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print the cells, question count and upper bounds on calls and dollars; run nothing",
    )
    p.add_argument(
        "--executor",
        metavar="NAME",
        help="where each cell's questions run, as eval --executor (default: the spec's, or thread)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.add_argument(
        "--allow-endpoint",
        action="append",
        default=[],
        metavar="HOST[:PORT]",
        help="send API keys to this model server or Ray cluster named in SPEC.toml (repeatable; "
        "by default a key goes only to its provider or to servers named on the command line "
        "or in the environment, see docs/security.md)",
    )
    p.set_defaults(func=run, needs_home=True)


def _bounds(cell: Cell) -> tuple[int, Any, Any]:
    """(questions, calls bound, dollars bound) of a cell."""
    from rlm_docs.cli.eval_cmd import options_from_args
    from rlm_docs.cli.flags import budget_from_args
    from rlm_docs.eval.bounds import calls_per_question, dollars_per_question

    args = cell_args(cell)
    budget = budget_from_args(args)
    n = cell.data.question_count()
    calls = calls_per_question(args.system, budget, options_from_args(args), bool(args.judge))
    models = [args.model, args.sub_model or args.model]
    dollars = dollars_per_question(budget, models, args.judge)
    return n, calls.times(n), dollars.times(n)


def _endpoints(cell: Cell) -> list[str]:
    """`role spec -> where its requests go` for each model of a cell (key sent or not)."""
    from rlm_docs.models.endpoints import describe

    args = cell_args(cell)
    roles = [("model", args.model), ("sub-model", args.sub_model), ("judge", args.judge)]
    return [f"{role} {spec} -> {describe(spec)}" for role, spec in roles if spec]


def _ray_line(sweep: Sweep) -> str | None:
    from rlm_docs.models.endpoints import cluster_may_get_keys

    flags = sweep.run_flags
    address = next(
        (b for a, b in zip(flags, flags[1:], strict=False) if a == "--ray-address"), None
    )
    if address is None:
        return None
    keys = "sent" if cluster_may_get_keys(address) else f"not sent (--allow-endpoint {address})"
    return f"Ray cluster {address}: API keys {keys}"


def _print_plan(sweep: Sweep) -> None:
    from rlm_docs.eval.bounds import Bound

    rows, models, total_q = [], [], 0
    calls_total, usd_total = Bound(0), Bound(0)
    unbounded: list[str] = []
    for cell in sweep.cells:
        n, calls, usd = _bounds(cell)
        total_q += n
        calls_total, usd_total = calls_total + calls, usd_total + usd
        for what, b in (("calls", calls), ("dollars", usd)):
            if b.value is None:
                unbounded.append(f"{cell.name}: {what} unbounded (bounded by {b.why})")
        at_most = "≤" if cell.data.workload and cell.data.workload.kind == "oolong" else ""
        rows.append(
            (
                cell.name,
                f"{at_most}{n}",
                "unbounded" if calls.value is None else f"{int(calls.value):,}",
                "unbounded" if usd.value is None else f"${usd.value:,.4f}",
            )
        )
        models.append(_endpoints(cell))
    header = ("cell", "questions", "calls ≤", "dollars ≤")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(4)]
    for r, lines in [(header, []), *zip(rows, models, strict=True)]:
        print(f"{r[0]:<{widths[0]}}  " + "  ".join(f"{r[i]:>{widths[i]}}" for i in (1, 2, 3)))
        for line in lines:
            print(f"    {sanitize(line)}")
    ray = _ray_line(sweep)
    if ray:
        print(sanitize(ray))
    calls_text = "unbounded" if calls_total.value is None else f"{int(calls_total.value):,}"
    usd_text = "unbounded" if usd_total.value is None else f"${usd_total.value:,.4f}"
    print(
        f"{len(sweep.cells)} cells, {total_q:,} questions; at most {calls_text} model calls "
        f"and {usd_text}"
    )
    for line in unbounded:
        print(f"  {line}")
    print(
        "(dollar bounds are the governor's limits; a provider that counts more prompt tokens "
        "than tiktoken can pass them by that difference on the calls in flight)"
    )


def _check_executor(sweep: Sweep) -> None:
    """Refuse `executor = "ray"` without the `ray` extra before a dry run prints a plan or any
    cell writes a file (eval would refuse it only inside the first cell)."""
    from rlm_docs.eval.executor import ray_executor_class

    flags = sweep.run_flags
    if any(a == "--executor" and b == "ray" for a, b in zip(flags, flags[1:], strict=False)):
        try:
            ray_executor_class()
        except ConfigError as exc:
            raise ConfigError(f"{sweep.path}: [sweep] executor: {exc}") from None


def run(args: argparse.Namespace) -> int:
    from rlm_docs.output_paths import check_output_dir

    check_output_dir(args.out, "--out")
    out = Path(args.out)
    sweep = load_sweep(args.spec, out, args.executor)
    _check_executor(sweep)
    if args.dry_run:
        _print_plan(sweep)
        return 0
    return _run(args, sweep, out)


def _eval_args(cell: Cell, out: Path, sweep: Sweep, progress: bool) -> argparse.Namespace:
    """eval's parsed flags for one cell, as `rlm-docs eval` would parse them (its `argv` is
    what a failed cell's retry hint shows: continuing an existing cell adds --resume and
    --retry-failed)."""
    from rlm_docs.cli import build_parser

    argv = ["eval", *cell.eval_argv(out, sweep.run_flags)]
    if (out / cell.name / "run.json").exists():
        argv += ["--resume", "--retry-failed"]
    if not progress:
        argv.append("--no-progress")
    args = build_parser().parse_args(argv)
    args.argv = argv
    return args


def _run(args: argparse.Namespace, sweep: Sweep, out: Path) -> int:
    """`run_sweep` over the spec's cells, printing as eval does per cell; 3 when questions
    failed in some cell."""
    from rlm_docs.cli.eval_cmd import (
        FAILED_QUESTIONS,
        failed_exit,
        print_summary,
        settings_from_args,
        traced,
    )
    from rlm_docs.cli.flags import apply_timeout
    from rlm_docs.eval.sweep import SweepCell, SweepInterrupted, run_sweep

    progress = not args.no_progress
    parsed = {c.name: _eval_args(c, out, sweep, progress) for c in sweep.cells}
    cells = []
    for cell in sweep.cells:
        settings = settings_from_args(parsed[cell.name])
        cells.append(SweepCell(cell.name, settings, cell.eval_argv(out, [])))
    if sweep.cells:
        apply_timeout(parsed[sweep.cells[0].name])  # a [sweep] key: the same in every cell

    def run_cell(cell: SweepCell, settings: Any) -> dict:
        eval_args = parsed[cell.name]
        summary = traced(settings, eval_args.otel)
        print_summary(eval_args, summary)
        failed_exit([summary], eval_args)
        return summary

    try:
        result = run_sweep(
            cells,
            out,
            workloads=sweep.workloads,
            spec=sweep.path,
            run=run_cell,
            log=lambda line: print(line, flush=True),
        )
    except SweepInterrupted as stop:
        hint = "rlm-docs " + shlex.join(getattr(args, "argv", None) or ["sweep", args.spec])
        raise Interrupted(
            f"{stop.done} of {stop.total} cells finished; every cell in {out} is resumable; "
            f"continue with:\n  {hint}"
        ) from None
    print(sanitize(result.report["markdown"]))
    print(f"\nreport: {out}/report/report.md, {out}/report/report.html")
    if not result.failed:
        return 0
    print(
        f"{len(result.failed)} cell(s) with failed questions ({', '.join(result.failed)}); run "
        "the same command again to retry them",
        file=sys.stderr,
    )
    return FAILED_QUESTIONS
