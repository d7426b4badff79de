"""`rlm-docs rescore RUN_DIR [--judge MODEL]`: score an eval run again without calling the
answering model.

Uses the current scorer (`rlm_docs.eval.scoring`) and, with `--judge`, an LLM judge for the
questions the numeric, exact and ANLS* stages cannot decide (prose golds among them); judge
calls land in the run's ledger as judge spend. Resumable after an interruption (run it again
with the same `--judge`); the run's files are replaced only when every question is rescored
(`rlm_docs.eval.rescoring`). `report` then reads the new scores.
"""

import argparse

from rlm_docs.number_flags import fraction


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "rescore",
        help="score an eval run again (current scorer, optional --judge), no answering calls",
        description=(
            "Score every recorded question of RUN_DIR again from its stored answer, gold and "
            "evidence: the current numeric, exact and ANLS* stages and, with --judge, MADQA's "
            "LLM judge for what they leave undecided (prose golds: `needs_judge` without a "
            "judge). Resumable; the run's files are replaced atomically at the end."
        ),
    )
    p.add_argument("run", metavar="RUN_DIR", help="run directory from `eval`")
    p.add_argument(
        "--judge",
        metavar="MODEL",
        help="LLM judge model (default: no new judge calls; stored verdicts stand)",
    )
    p.add_argument(
        "--judge-sensitivity", type=fraction, help="for Rogan-Gladen (default: the run's)"
    )
    p.add_argument(
        "--judge-specificity", type=fraction, help="for Rogan-Gladen (default: the run's)"
    )
    p.set_defaults(func=run, needs_home=True)


def run(args: argparse.Namespace) -> int:
    import shlex

    from rlm_docs.eval.aggregate import decided_text, headline_accuracy
    from rlm_docs.eval.rescoring import rescore_run

    s = rescore_run(
        args.run,
        args.judge,
        sensitivity=args.judge_sensitivity,
        specificity=args.judge_specificity,
    )
    acc, how = headline_accuracy(s)
    value = "n/a" if acc["value"] != acc["value"] else f"{acc['value']:.1%}"
    decided = decided_text(s, shlex.quote(args.run))
    judge_calls = s.get("judge_calls", 0)
    print(
        f"rescored {s['n']} questions: accuracy {value} ({how})"
        f"{'; ' + decided if decided else ''}; judge calls ${s['total_judge_cost_usd']:.4f} "
        f"({judge_calls} calls) -> {args.run}"
    )
    return 0
