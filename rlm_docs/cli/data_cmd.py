"""`rlm-docs data get NAME --out DIR`: a public benchmark as a store and a question file."""

import argparse
import json
import sys

from rlm_docs.cli.command_group import group_action
from rlm_docs.number_flags import positive_int


def register(subparsers: argparse._SubParsersAction) -> None:
    get = group_action(
        subparsers,
        "data",
        "get",
        group_help=(
            "fetch public benchmarks (MADQA, OOLONG, FinanceBench, MMLongBench-Doc) as a corpus "
            "store and a question file",
            "Public benchmarks from the Hugging Face Hub, ready for `eval`.",
        ),
        action_help=(
            "download a benchmark and write DIR/corpus (store) and DIR/questions.jsonl",
            "Download a benchmark's questions and corpus (cached under HF_HOME; an interrupted "
            "download resumes) and write DIR/corpus, a store, and DIR/questions.jsonl, a "
            "MADQA-schema question file; `rlm-docs eval --dataset DIR/questions.jsonl "
            "--corpus DIR/corpus` takes both as they are. Needs the `hub` extra.",
        ),
    )
    get.add_argument(
        "name", metavar="NAME", help="benchmark: madqa, financebench, mmlongbench-doc, oolong"
    )
    get.add_argument("--out", required=True, metavar="DIR", help="directory to write")
    get.add_argument(
        "--split",
        help="question split (madqa: dev, the default; train; test. oolong: validation, the "
        "default; test. financebench and mmlongbench-doc: train, the only one)",
    )
    get.add_argument("--limit", type=positive_int, metavar="N", help="keep the first N questions")
    get.add_argument(
        "--mirror",
        metavar="DIR",
        help="read the hub repositories from local copies, DIR/OWNER/NAME (no network; "
        "default: RLM_DOCS_HUB_MIRROR when set)",
    )
    get.add_argument("--json", action="store_true", help="print the summary as JSON")
    get.set_defaults(func=run_get)


def run_get(args: argparse.Namespace) -> int:
    from rlm_docs.hub import get_benchmark
    from rlm_docs.output_paths import check_output_dir

    check_output_dir(args.out, "--out")
    summary = get_benchmark(
        args.name,
        args.out,
        split=args.split,
        limit=args.limit,
        mirror=args.mirror,
        log=lambda line: print(line, file=sys.stderr),
    )
    for warning in summary["page_count_warnings"][:5]:
        print(f"warning: {warning}", file=sys.stderr)
    if len(summary["page_count_warnings"]) > 5:
        more = len(summary["page_count_warnings"]) - 5
        print(f"warning: ... and {more} more page-count differences", file=sys.stderr)
    if summary["missing_evidence_documents"]:
        names = ", ".join(summary["missing_evidence_documents"][:5])
        print(f"warning: evidence names documents the corpus lacks: {names}", file=sys.stderr)
    if args.json:
        print(json.dumps(summary, indent=1))
        return 0
    if summary.get("corpus_hint"):
        docs = len(summary["evidence_documents"])
        print(
            f"{summary['benchmark']} {summary['split']}: {summary['questions']} questions over "
            f"{docs} documents\n  questions: {summary['dataset']}\n"
            f"  corpus:    {summary['corpus_hint']}"
        )
        return 0
    if "parts" in summary:
        print(
            f"{summary['benchmark']} {summary['split']}: {summary['questions']} questions over "
            f"{summary['windows']} context windows, {summary['pages']:,} pages\n"
            f"  one corpus and question file per window under {args.out} (manifest.json)"
        )
        return 0
    print(
        f"{summary['benchmark']} {summary['split']}: {summary['questions']} questions, "
        f"{summary['documents']} documents, {summary['pages']:,} pages\n"
        f"  questions: {summary['dataset']}\n  corpus:    {summary['corpus']}"
    )
    return 0
