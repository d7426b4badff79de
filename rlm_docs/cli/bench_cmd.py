"""`rlm-docs bench make KIND --out DIR`: generate a workload where decomposition pays.

Writes one corpus store and one question file per token target, plus a manifest, then prints
the actual token counts and where each part went (see `rlm_docs.bench.make`).
"""

import argparse
import re
import time

from rlm_docs.cli.command_group import group_action
from rlm_docs.errors import ConfigError
from rlm_docs.number_flags import positive_int


def _tokens(value: str) -> int:
    """`8192` or `2^13` (also `2**13`)."""
    found = re.fullmatch(r"\s*2\s*(?:\^|\*\*)\s*(\d{1,2})\s*", value)
    if found:
        return 2 ** int(found.group(1))
    if not re.fullmatch(r"\s*\d+\s*", value):
        raise argparse.ArgumentTypeError(f"expected a token count such as 8192 or 2^13: {value!r}")
    return int(value)


def register(subparsers: argparse._SubParsersAction) -> None:
    make = group_action(
        subparsers,
        "bench",
        "make",
        group_help=(
            "generate workloads (oolong, oolong-pairs, needle)",
            "Generated workloads whose questions need decomposition.",
        ),
        action_help=(
            "write a corpus store, questions.jsonl and manifest.json per token target",
            "Generate KIND deterministically from --seed at each --tokens target (cl100k "
            "tokens): OUT/<tokens>/corpus, OUT/<tokens>/questions.jsonl, OUT/manifest.json.",
        ),
    )
    make.add_argument("kind", choices=("oolong", "oolong-pairs", "needle"), help="workload")
    make.add_argument("--out", required=True, metavar="DIR", help="output directory")
    make.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    make.add_argument(
        "--tokens",
        type=_tokens,
        nargs="+",
        default=[8192],
        metavar="T",
        help="context lengths in tokens, e.g. 2^13 2^15 (default 8192)",
    )
    make.add_argument(
        "--questions", type=positive_int, default=20, help="questions per length (default 20)"
    )
    make.add_argument(
        "--data",
        metavar="PATH",
        help="TREC-coarse JSONL for oolong/oolong-pairs (default: "
        "$RLM_DOCS_DATA/oolong-trec/trec_coarse_validated.jsonl; see docs/data.md)",
    )
    make.add_argument(
        "--filler", metavar="STORE", help="corpus store whose pages fill needle (default: demo)"
    )
    make.add_argument(
        "--needles", type=positive_int, default=1, help="facts per needle question (k)"
    )
    make.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rlm_docs.bench.make import make_bench
    from rlm_docs.output_paths import check_output_dir

    if args.kind != "needle" and (args.filler or args.needles != 1):
        raise ConfigError("--filler and --needles apply to the needle workload only")
    if args.kind == "needle" and args.data:
        raise ConfigError("--data applies to oolong and oolong-pairs only")
    check_output_dir(args.out, "--out")
    start = time.perf_counter()
    manifest = make_bench(
        args.kind,
        args.out,
        seed=args.seed,
        tokens=args.tokens,
        questions=args.questions,
        data=args.data,
        filler=args.filler,
        needles=args.needles,
    )
    for part in manifest["parts"]:
        print(
            f"{args.kind} {part['tokens']}: {part['text_tokens']} tokens of text "
            f"({part['rendered_tokens']} rendered), {part['num_questions']} questions -> "
            f"{args.out}/{part['tokens']}"
        )
    print(f"generated in {time.perf_counter() - start:.1f}s; manifest: {args.out}/manifest.json")
    return 0
