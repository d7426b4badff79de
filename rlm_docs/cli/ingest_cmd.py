"""`rlm-docs ingest SRC... --out CORPUS`: read documents into a corpus store."""

import argparse
import json

from rlm_docs.cli.console import console
from rlm_docs.ingest.formats import FORMATS, OCR_MODES


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "ingest",
        help="read PDFs, OCR JSON, markdown, page lists or text into a corpus store",
        description=(
            "Read source files (directories are searched recursively) into a Parquet corpus "
            "store with a BM25 index. The format is detected from the extension and content: "
            ".pdf (Mistral OCR, or the text layer), .json (Mistral OCR response or list of "
            "page strings), .md (pages split at form feeds or --separator), .txt (pdftotext "
            "form feeds, or a marked [FILE: ...] corpus). Unchanged files are not re-read."
        ),
    )
    p.add_argument("sources", nargs="+", metavar="SRC", help="files or directories")
    p.add_argument("--out", "-o", required=True, metavar="CORPUS", help="store directory")
    p.add_argument("--format", choices=FORMATS, help="read every source with this reader")
    p.add_argument(
        "--separator",
        metavar="LINE",
        help="markdown page separator line (default: form feed), e.g. --separator ---",
    )
    p.add_argument(
        "--ocr",
        choices=OCR_MODES,
        default="auto",
        help="PDFs: Mistral OCR (needs MISTRAL_API_KEY), local text layer, or auto (default)",
    )
    p.add_argument(
        "--metadata",
        metavar="FILE",
        help="JSONL with one object per document, keyed by 'document' or 'doc_name' (file "
        "stem), e.g. a data set's documents.jsonl; stored with the documents (company, "
        "doc_type and period also help search find the right filing)",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:

    from rlm_docs.ingest import ingest
    from rlm_docs.output_paths import check_output_dir

    check_output_dir(args.out, "--out")
    err = console(stderr=True)
    with err.status(f"ingesting into {args.out} …"):
        report = ingest(
            args.sources,
            args.out,
            format=args.format,
            separator=args.separator,
            ocr=args.ocr,
            metadata=args.metadata,
        )
    if args.json:
        print(json.dumps(report.to_dict(), indent=1))
        return 0
    for w in report.warnings:
        err.print(f"[yellow]warning:[/] {w}", markup=True)
    out = console()
    state = "written" if report.written else "unchanged"
    out.print(
        f"[bold]{report.path}[/] ({state}): {report.documents} documents, "
        f"{report.pages:,} pages, {report.tokens:,} tokens; read {report.read}, "
        f"skipped {report.skipped} unchanged, {len(report.warnings)} warnings"
    )
    return 0
