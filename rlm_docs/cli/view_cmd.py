"""`rlm-docs view RUN_OR_LOG --out FILE.html`: one self-contained HTML trajectory viewer."""

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "view",
        help="write a self-contained HTML viewer of an eval run or a trajectory log",
        description=(
            "Build one offline HTML file showing a run's questions (correctness, cost, effort) "
            "and each question's full trajectory: code, outputs and nested sub-calls."
        ),
    )
    p.add_argument("source", metavar="RUN_OR_LOG", help="eval run directory or trajectory .jsonl")
    p.add_argument("--out", required=True, metavar="FILE.html", help="HTML file to write")
    p.add_argument(
        "--corpus",
        metavar="STORE",
        help="corpus store (or `demo`) to quote cited pages from (default: none, citations only)",
    )
    p.add_argument("--title", help="page title (default: the source's name)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rlm_docs.ingest.demo import resolve_store
    from rlm_docs.output_paths import check_output_file
    from rlm_docs.viewer import write_viewer

    check_output_file(args.out, "--out")
    corpus = resolve_store(args.corpus) if args.corpus else None
    out = write_viewer(args.source, args.out, corpus=corpus, title=args.title)
    print(f"wrote {out} ({Path(out).stat().st_size:,} bytes)")
    return 0
