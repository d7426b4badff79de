"""`rlm-docs export RUN_DIR --format F --out FILE`: an eval run in another tool's format
(`--out` is a directory for formats that write one file per question: rlms)."""

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    from rlm_docs.export import FORMATS

    p = subparsers.add_parser(
        "export",
        help="write an eval run in another tool's format (inspect: an Inspect AI eval log; "
        "rlms: rlms logs)",
        description=(
            "Write an eval run directory in another tool's format. inspect: an Inspect AI "
            "eval log (.eval or .json) that `inspect view` opens: one sample per question "
            "with its scores, model usage, and the REPL turns and sub-calls as events "
            "(needs the `inspect` extra). rlms: one rlms JSONL log per question in the --out "
            "directory, which rlms' viewer opens."
        ),
    )
    p.add_argument("run", metavar="RUN_DIR", help="run directory from `eval`")
    p.add_argument("--format", required=True, choices=sorted(FORMATS), help="output format")
    p.add_argument("--out", required=True, metavar="FILE", help="file to write (rlms: a directory)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rlm_docs.export import export_run, writes_directory
    from rlm_docs.output_paths import check_output_dir, check_output_file

    check = check_output_dir if writes_directory(args.format) else check_output_file
    check(args.out, "--out")
    out = export_run(args.run, args.format, args.out)
    print(f"wrote {out}")
    return 0
