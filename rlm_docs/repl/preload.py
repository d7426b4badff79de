"""The preload factory of a corpus sandbox: what every worker on one store starts with.

Called by the sandbox's fork server (`sandbox.preload`), once per store, in a fresh interpreter
with no host environment, so it takes everything it needs as arguments: the store directory and
the context cache directory the host chose.
"""

import importlib
import threading
import time
from pathlib import Path

from rlm_docs.errors import CorpusError
from sandbox import Preloaded

# Pure functions over strings (what a document name says about its company, period and kind,
# and how well a query names it) that cells may import; the offline model's REPL code uses them
# rather than a copy (`rlm_docs.offline.repl.filings`).
MODULES = {
    "rlm_docs.corpus.filings": "company_match describe kind_match parse_query period_match",
}


def load_corpus(store: str, cache_dir: str | None = None) -> Preloaded:
    """`context`, `corpus`, `pages_read()`, `CorpusError` and the helper functions for the store
    at `store`; the logs the helpers record pages in: `read` and `seen` (named by
    search/grep/locate results), read by the host with `Sandbox.log`."""
    started = time.perf_counter()
    phases: dict[str, float] = {}

    def mark(name: str) -> None:
        nonlocal started
        now = time.perf_counter()
        phases[name] = round(now - started, 4)
        started = now

    from rlm_docs.repl.context_cache import ContextLoader

    loader = ContextLoader(Path(store), Path(cache_dir) if cache_dir else None)
    from rlm_docs.corpus import Corpus
    from rlm_docs.repl.helpers import ReadLog, facade, make_helpers

    mark("corpus_imports")
    # Page search imports bm25s and through it scipy (about a third of a second of Python);
    # the Parquet read releases the GIL, so the import runs beside it on the other core.
    searching = threading.Thread(target=importlib.import_module, args=("rlm_docs.corpus.search",))
    searching.start()
    try:
        corpus = Corpus.load(store)
    except OSError as exc:
        raise CorpusError(f"{store}: cannot load the corpus store ({exc})") from None
    finally:
        searching.join()
    # A real search (not k=0, which returns before scoring) opens the memory-mapped index and
    # runs the scoring path once here: the code pages, lazily built tables and allocator state
    # it leaves are then shared by every fork, where each fresh worker's first search used to
    # fault them in again (3,400 page faults per FinanceBench worker instead of 2,100). A
    # document's name is a query whose words the index knows, whatever the corpus.
    corpus.search(corpus.documents[0].name if corpus.documents else "", k=3)
    reads, seen = ReadLog(), ReadLog()  # each forked worker gets its own copies
    helpers = make_helpers(corpus, reads, seen)
    mark("corpus_load")
    context = loader.result(corpus.render)
    mark("context")

    def pages_read() -> list[list[object]]:
        """`[[doc, page], ...]` read with page/pages/lines/read_section so far, in first-read order."""
        return [list(item) for item in reads]

    namespace = {
        "context": context,
        "corpus": facade(helpers),
        "CorpusError": CorpusError,
        "pages_read": pages_read,
        **helpers,
    }
    return Preloaded(namespace, {"read": reads, "seen": seen}, dict(MODULES), phases)
