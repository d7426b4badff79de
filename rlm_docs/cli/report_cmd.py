"""`rlm-docs report RUN_DIR [RUN_DIR ...] --out DIR`: compare eval runs in one report.

Writes DIR/report.md, DIR/report.html, DIR/summary.json and the PNG figures, and prints the
comparison table.
"""

import argparse
from pathlib import Path

from rlm_docs.errors import ConfigError

RUN_MARKERS = ("run.json", "step_limits.json")  # an eval run; a step-limit run's root


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "report",
        help="compare eval runs: tables (markdown, HTML) and calibration/cost plots",
        description=(
            "Accuracy, X-page, X-doc, page/doc F1, Kuiper (steps, tokens), tokens, dollars, "
            "wall time and error taxonomy per run, subsets, the decomposition table (fan-out, "
            "sub-calls, pages and share of the corpus read, strategies), Kuiper per effort "
            "measure, and PNG figures (accuracy and cost vs context length, fan-out, share read "
            "vs correctness); a RUN_DIR from `eval --max-steps 1,2,4,...` adds the exact "
            "accuracy-vs-step-limit curve."
        ),
    )
    p.add_argument(
        "runs",
        nargs="+",
        metavar="RUN_DIR",
        help="run directories from `eval` (or a step-limit RUN_DIR from `eval --max-steps LIST`)",
    )
    p.add_argument("--out", required=True, metavar="DIR", help="report directory")
    p.add_argument(
        "--by",
        action="append",
        default=[],
        metavar="FIELD",
        help="also break results down by this question field (repeatable), e.g. "
        "text_answerable, evidence_sources; hop type, question type, domain and doc_type always",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rlm_docs.eval.report import build_report
    from rlm_docs.output_paths import check_output_dir
    from rlm_docs.terminal_text import sanitize

    check_output_dir(args.out, "--out")
    _refuse_run_dir(Path(args.out))

    result = build_report(args.runs, args.out, by=args.by)
    print(sanitize(result["markdown"]))  # questions and answers are document and model text
    print()
    print(sanitize("\n".join(result["notes"])))
    print(f"\nreport: {args.out}/report.md, {args.out}/report.html")
    return 0


def _refuse_run_dir(out: Path) -> None:
    """A report written into a run directory (or below one) would mix its files with the run's
    results, and a later `eval --resume` or `report` of that run would find them there."""
    target = out.resolve()
    for directory in [target, *target.parents]:
        marker = next((m for m in RUN_MARKERS if (directory / m).is_file()), None)
        if marker is not None:
            where = "is" if directory == target else f"is inside {directory},"
            raise ConfigError(
                f"--out {out}: {where} an eval run's directory ({marker}); write the report "
                "to a directory of its own, e.g. reports/NAME"
            )
