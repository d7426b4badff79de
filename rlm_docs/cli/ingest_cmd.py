"""`rlm-docs ingest SRC... --out CORPUS`: read documents into a corpus store."""

import argparse
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rlm_docs.ingest.formats import FORMATS, OCR_MODES
from rlm_docs.number_flags import plural
from rlm_docs.terminal_text import console, json_text


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "ingest",
        help="read PDFs, OCR JSON, markdown, page lists or text into a corpus store",
        description=(
            "Read source files (directories are searched recursively) into a Parquet corpus "
            "store with a BM25 index. The format is detected from the extension and content: "
            ".pdf (Mistral OCR, or the text layer and Tesseract), .json (Mistral OCR response or list of "
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
        help="PDFs: Mistral OCR (needs MISTRAL_API_KEY); local: the text layer, and Tesseract "
        "for pages without one; auto (default): mistral when the key is set, else local",
    )
    p.add_argument(
        "--encoding",
        metavar="NAME",
        help="read text sources (.md/.txt/.json) in this encoding, e.g. cp1252 or utf-16 "
        "(default: UTF-8, or the encoding detected for text that is not UTF-8)",
    )
    p.add_argument(
        "--metadata",
        metavar="FILE",
        help="JSONL with one object per document, keyed by 'document' or 'doc_name' (file "
        "stem), e.g. a data set's documents.jsonl; stored with the documents (company, "
        "doc_type and period also help search find the right filing)",
    )
    p.add_argument(
        "--ranker",
        metavar="NAME",
        help="page-search ranker recorded in the store: generic or sec (default: sec when most "
        "documents are SEC filings by their metadata doc_type or name, else generic)",
    )
    p.add_argument(
        "--append",
        action="store_true",
        help="keep the documents already in CORPUS, adding the new ones (a document of the same "
        "name is replaced); without it CORPUS is replaced by exactly the documents of SRC",
    )
    p.add_argument(
        "--follow-symlinks",
        action="store_true",
        help="read files that are symlinks to places outside SRC (refused by default)",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="list every warning and every file not read (default: a summary)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rlm_docs.ingest import ingest
    from rlm_docs.output_paths import check_output_dir

    check_output_dir(args.out, "--out")
    err = console(stderr=True)
    with _progress(err) as on_progress:
        report = ingest(
            args.sources,
            args.out,
            format=args.format,
            separator=args.separator,
            ocr=args.ocr,
            metadata=args.metadata,
            append=args.append,
            on_progress=on_progress,
            follow_symlinks=args.follow_symlinks,
            encoding=args.encoding,
            ranker=args.ranker,
        )
    if args.json:
        print(json_text(report.to_dict(), indent=1))
        return 0
    for line in _warning_lines(report.warnings, args.verbose):
        err.print(line, markup=False, highlight=False)
    if report.ignored:
        err.print(_ignored_line(report.ignored, args.verbose), markup=False)
    if report.removed:
        names = ", ".join(report.removed[: None if args.verbose else SHOWN])
        more = len(report.removed) - SHOWN
        tail = f", … (+{more}; -v lists all)" if more > 0 and not args.verbose else ""
        err.print(
            f"removed {len(report.removed)} document(s) that were in {report.path} but not in "
            f"the sources: {names}{tail}. Use --append to add documents to a store instead.",
            markup=False,
        )
    state = "written" if report.written else "unchanged"
    console().print(
        f"[bold]{report.path}[/] ({state}): {plural(report.documents, 'document')}, "
        f"{plural(report.pages, 'page')}, {plural(report.tokens, 'token')}; read {report.read}, "
        f"skipped {report.skipped} unchanged, {len(report.warnings)} warnings"
    )
    return 0


SHOWN = 5  # names shown per summary line without -v


@contextmanager
def _progress(err: Any) -> Iterator[Callable[[int, int, int], None]]:
    """A progress bar on stderr (files, pages, elapsed, time left), then the store write."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("files, {task.fields[pages]:,} pages"),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=err, transient=True, disable=not err.is_terminal) as bar:
        task = bar.add_task("reading", total=None, pages=0)

        def update(done: int, total: int, pages: int) -> None:
            stage = "writing store" if done == total else "reading"
            bar.update(task, completed=done, total=total, pages=pages, description=stage)

        yield update


_NUMBER = "\x00"
_NUMBERS = re.compile(r"\d+(?:[.,]\d+)*(?:\s*,\s*\d+(?:[.,]\d+)*)*(?:, …)?")


def _kind(warning: str) -> tuple[str, str, list[str]]:
    """(file, kind, numbers) of a `FILE: message` warning; the kind is the message up to its
    first clause with quoted text generalised and each number replaced by `_NUMBER` (a NUL,
    which no message holds), so like warnings group together; `numbers` are the numbers it
    replaced, in order."""
    file, sep, message = warning.partition(": ")
    if not sep:
        return "", warning, []
    clause = re.split(r";|:| \(", re.sub(r"'[^']*'", "'…'", message), maxsplit=1)[0]
    clause = clause.strip(" .")
    return file, _NUMBERS.sub(_NUMBER, clause), _NUMBERS.findall(clause)


def _span(values: list[str]) -> str:
    """The numbers a group's warnings had at one place: `3`, or `1–12` when they differ."""
    try:
        numbers = sorted({int(v.replace(",", "")) for v in values})
    except ValueError:
        return values[0] if len(set(values)) == 1 else "…"
    low, high = numbers[0], numbers[-1]
    return f"{low:,}" if low == high else f"{low:,}–{high:,}"


def _warning_lines(warnings: list[str], verbose: bool) -> list[str]:
    """Every warning with -v (or when there are few); else one line per kind of warning with
    its count, the numbers it had (one, or the range) and a few of the files."""
    if verbose or len(warnings) <= SHOWN:
        return [f"warning: {w}" for w in warnings]
    groups: dict[str, list[tuple[str, list[str]]]] = {}
    for w in warnings:
        file, kind, numbers = _kind(w)
        groups.setdefault(kind, []).append((file, numbers))
    lines = [f"{len(warnings)} warnings (-v lists them all):"]
    for kind, items in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        parts = kind.split(_NUMBER)
        spans = [_span([n[i] for _, n in items]) for i in range(len(parts) - 1)]
        text = "".join(p + s for p, s in zip(parts, [*spans, ""], strict=True))
        names = [Path(f).name for f in dict.fromkeys(f for f, _ in items) if f]
        shown = ", ".join(names[:3]) + (", …" if len(names) > 3 else "")
        lines.append(f"  {len(items)} × {text}" + (f" ({shown})" if shown else ""))
    return lines


def _ignored_line(ignored: list[str], verbose: bool) -> str:
    """How many files in the source directories were not read, and which (all with -v)."""
    names = ignored if verbose else ignored[:SHOWN]
    more = "" if verbose or len(ignored) <= SHOWN else f", … (-v lists all {len(ignored)})"
    return (
        f"ignored {len(ignored)} file(s) that are not .pdf/.json/.md/.txt, hidden, or corpus "
        "stores: " + ", ".join(names) + more
    )
