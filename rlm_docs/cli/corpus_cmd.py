"""`rlm-docs corpus info|show|search CORPUS ...`: inspect a corpus store."""

import argparse
import sys

from rlm_docs.number_flags import plural, positive_int
from rlm_docs.terminal_text import console, json_text, sanitize


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("corpus", help="inspect a corpus store (info, show, search)")
    sub = p.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True

    info = sub.add_parser("info", help="documents, pages and tokens of a store")
    info.add_argument("corpus", metavar="CORPUS", help="store directory, or `demo`")
    info.add_argument("--json", action="store_true", help="print JSON")
    info.set_defaults(func=run_info)

    show = sub.add_parser("show", help="print one page")
    show.add_argument("corpus", metavar="CORPUS", help="store directory, or `demo`")
    show.add_argument("document", metavar="DOC", help="document name (case-insensitive)")
    show.add_argument("page", metavar="PAGE", type=positive_int, help="1-based page number")
    show.set_defaults(func=run_show)

    search = sub.add_parser("search", help="BM25 page search")
    search.add_argument("corpus", metavar="CORPUS", help="store directory, or `demo`")
    search.add_argument("query", help="search words")
    search.add_argument("-k", type=positive_int, default=5, help="number of hits (default 5)")
    search.add_argument(
        "--doc",
        metavar="DOC",
        help="only pages of these documents: a name, a glob (`3M_*_10K`) or a name fragment "
        "(`2022`), as the sandbox helpers' `doc` accepts",
    )
    search.add_argument("--no-boost", action="store_true", help="plain BM25, no name boost")
    search.add_argument(
        "--ranker",
        metavar="NAME",
        help="generic or sec (default: the store's, see `rlm-docs ingest --ranker`)",
    )
    search.add_argument("--json", action="store_true", help="print JSON lines")
    search.set_defaults(func=run_search)


def run_info(args: argparse.Namespace) -> int:
    from rich.markup import escape
    from rich.table import Table

    from rlm_docs.corpus import Corpus
    from rlm_docs.ingest.demo import resolve_store

    corpus = Corpus.load(resolve_store(args.corpus))
    docs = corpus.documents
    totals = {
        "documents": len(docs),
        "pages": corpus.total_pages,
        "chars": corpus.total_chars,
        "tokens": corpus.total_tokens,
    }
    if args.json:
        print(
            json_text(
                {"path": str(corpus.path), **totals, "per_document": [d.to_dict() for d in docs]},
                indent=1,
            )
        )
        return 0
    table = Table(title=escape(str(corpus.path)))
    for col in ("document", "pages", "chars", "tokens"):
        table.add_column(col, justify="left" if col == "document" else "right")
    for d in docs:
        table.add_row(escape(d.name), f"{d.num_pages:,}", f"{d.chars:,}", f"{d.tokens:,}")
    table.add_section()
    table.add_row(
        f"total ({plural(totals['documents'], 'document')})",
        f"{totals['pages']:,}",
        f"{totals['chars']:,}",
        f"{totals['tokens']:,}",
        style="bold",
    )
    console().print(table)
    return 0


def run_show(args: argparse.Namespace) -> int:
    from rlm_docs.corpus import Corpus
    from rlm_docs.ingest.demo import resolve_store

    text = Corpus.load(resolve_store(args.corpus)).page(args.document, args.page)
    text = sanitize(text)  # page text is document text: it must not drive the terminal
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def run_search(args: argparse.Namespace) -> int:
    from rich.markup import escape

    from rlm_docs.corpus import Corpus
    from rlm_docs.corpus.select import select
    from rlm_docs.ingest.demo import resolve_store

    corpus = Corpus.load(resolve_store(args.corpus))
    hits = corpus.search(
        args.query,
        k=args.k,
        document=select(corpus, args.doc),
        boost_names=not args.no_boost,
        ranker=args.ranker,
    )
    if args.json:
        for h in hits:
            print(json_text(h.to_dict()))
        return 0
    out = console()
    if not hits:
        out.print("no matching pages")
    for rank, h in enumerate(hits, 1):
        out.print(f"[bold]{rank}. {escape(h.document)} p.{h.page}[/] [dim]({h.score:.2f})[/]")
        if h.title:
            out.print(f"   [{h.title}]", markup=False)
        out.print(f"   {h.snippet}", markup=False)
    return 0
