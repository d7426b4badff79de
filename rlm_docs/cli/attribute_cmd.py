"""`rlm-docs attribute RUN_DIR [--question ID] (--sub-call N | --all) --replace R`: which
sub-calls an `rlm` answer rests on (see `rlm_docs.eval.attribute`); `--all` without
`--question` makes the run-wide table, every sub-call of every question."""

import argparse
from typing import Any

from rlm_docs.errors import ConfigError
from rlm_docs.number_flags import positive_int


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "attribute",
        help="re-run a question with one sub-call's reply replaced: did the answer change?",
        description=(
            "Re-run question ID of an rlm eval run with the reply of a recorded llm_query "
            "(child RLMs' included) replaced (empty, text:STR, or model:SPEC), the other calls "
            "replayed from the response cache; prints per sub-call whether the answer and score "
            "changed and what the re-run cost. --all without --question: every sub-call of "
            "every question of the run."
        ),
    )
    p.add_argument("run", metavar="RUN_DIR", help="run directory from `eval --system rlm`")
    p.add_argument("--question", metavar="ID", help="the question's id (required with --sub-call)")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--sub-call", type=positive_int, metavar="N", help="sub-call number N")
    which.add_argument("--all", action="store_true", help="every sub-call, one re-run each")
    p.add_argument("--replace", required=True, metavar="R", help="empty | text:STR | model:SPEC")
    p.add_argument("--cache", metavar="FILE", help="the response-cache file the run used")
    p.set_defaults(func=run, needs_home=True)


def run(args: argparse.Namespace) -> int:
    from rlm_docs.eval.attribute import attribute, attribute_run, mattered

    if args.question is None:
        if not args.all:
            raise ConfigError("--sub-call N needs --question ID (its numbers are per question)")
        rows = attribute_run(args.run, args.replace, args.cache)
        _table(rows, with_question=True)
        print(mattered(rows))
        return 0
    numbers = None if args.all else [args.sub_call]
    _table(attribute(args.run, args.question, numbers, args.replace, args.cache))
    return 0


def _table(rows: list[dict[str, Any]], with_question: bool = False) -> None:
    from rlm_docs.terminal_text import sanitize

    width = max([len("question"), *(len(r["question"]) for r in rows)]) if with_question else 0
    first = f"{'question':<{width}}  " if with_question else ""
    print(f"{first}sub-call  depth  answer changed  score  new calls  cost  prompt")
    for r in rows:
        lead = f"{r['question']:<{width}}  " if with_question else ""
        changed = "yes" if r["answer_changed"] else "no"
        score = f"{r['score_was']} -> {r['score']}"
        print(
            sanitize(
                f"{lead}{r['sub_call']:>8}  {r['depth']:>5}  {changed:>14}  {score}  "
                f"{r['new_calls']:>9}  ${r['cost_usd']:.4f}  {r['prompt']!r}"
            )
        )
