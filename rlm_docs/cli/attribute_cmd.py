"""`rlm-docs attribute RUN_DIR --question ID (--sub-call N | --all) --replace R`: which
sub-calls an `rlm` answer rests on (see `rlm_docs.eval.attribute`)."""

import argparse

from rlm_docs.number_flags import positive_int


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "attribute",
        help="re-run a question with one sub-call's reply replaced: did the answer change?",
        description=(
            "Re-run question ID of an rlm eval run with the reply of a recorded llm_query "
            "replaced (empty, text:STR, or model:SPEC), the other calls replayed from the "
            "response cache; prints per sub-call whether the answer and score changed and what "
            "the re-run cost."
        ),
    )
    p.add_argument("run", metavar="RUN_DIR", help="run directory from `eval --system rlm`")
    p.add_argument("--question", required=True, metavar="ID", help="the question's id")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--sub-call", type=positive_int, metavar="N", help="sub-call number N")
    which.add_argument("--all", action="store_true", help="every sub-call, one re-run each")
    p.add_argument("--replace", required=True, metavar="R", help="empty | text:STR | model:SPEC")
    p.add_argument("--cache", metavar="FILE", help="the response-cache file the run used")
    p.set_defaults(func=run, needs_home=True)


def run(args: argparse.Namespace) -> int:
    from rlm_docs.eval.attribute import attribute
    from rlm_docs.terminal_text import sanitize

    numbers = None if args.all else [args.sub_call]
    rows = attribute(args.run, args.question, numbers, args.replace, args.cache)
    print("sub-call  answer changed  score  new calls  cost  prompt")
    for r in rows:
        changed = "yes" if r["answer_changed"] else "no"
        score = f"{r['score_was']} -> {r['score']}"
        print(
            sanitize(
                f"{r['sub_call']:>8}  {changed:>14}  {score}  {r['new_calls']:>9}  "
                f"${r['cost_usd']:.4f}  {r['prompt']!r}"
            )
        )
    return 0
