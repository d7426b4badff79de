"""Notebook Session latency: worker start-up versus steady-state helper cells.

A researcher feels two numbers: how long the first `%%rlm` cell takes (the sandbox worker
starts and maps the store) and how long each later cell takes (a round trip to a warm worker).

    python benchmarks/bench_session.py [--store STORE] [--cells 30]

Default store: the bundled demo corpus.
"""

import argparse
import statistics
import time

from rlm_docs.notebook import Session


def timed(session: Session, code: str) -> float:
    t0 = time.perf_counter()
    result = session.run(code)
    elapsed = time.perf_counter() - t0
    if result.error:
        raise SystemExit(f"cell failed: {result.error}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", help="corpus store (default: the demo corpus)")
    parser.add_argument("--cells", type=int, default=30)
    args = parser.parse_args()
    if args.store is None:
        from rlm_docs.ingest.demo import demo_corpus_path

        args.store = demo_corpus_path()
    t0 = time.perf_counter()
    session = Session(args.store)
    opened = time.perf_counter() - t0
    with session:
        first = timed(session, "print(len(files()))")
        doc = session.corpus.names[0]
        noop = [timed(session, "x = 1") for _ in range(args.cells)]
        search = [
            timed(session, f"h = search('capital expenditure {i}', k=5)") for i in range(args.cells)
        ]
        page = [timed(session, f"t = page({doc!r}, 1)") for _ in range(args.cells)]
    corpus = session.corpus
    print(
        f"store                     {args.store} ({len(corpus)} docs, {corpus.total_pages} pages)"
    )
    print(f"Session() (open corpus)   {opened * 1000:8.1f} ms")
    print(f"first cell (worker start) {first * 1000:8.1f} ms")
    for label, times in (("no-op cell", noop), ("search() cell", search), ("page() cell", page)):
        print(f"{label:<25} {statistics.median(times) * 1000:8.2f} ms median")
    print(f"first / search cell       {first / statistics.median(search):8.0f} x")


if __name__ == "__main__":
    main()
