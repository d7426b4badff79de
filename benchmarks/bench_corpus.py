"""Corpus benchmark on the FinanceBench filings (344 pdftotext documents, ~50,000 pages).

Prints, from one run: full ingest time and throughput (pages/s), re-ingest time when nothing
changed, store size, `Corpus.load` time, `render()` time, `locate` time, peak memory (RSS), BM25
search latency p50/p95, and retrieval quality on `questions.dev.jsonl` (question text as the
query): page recall@5 (a gold evidence page is among the 5 hits) and document recall@5 (a hit
comes from a gold document), for plain body BM25, with the page-heading field, and the default
ranking (filing match from `documents.jsonl` metadata, statement kinds; see
benchmarks/bench_retrieval.py for the full ablation on three data sets).

    python benchmarks/bench_corpus.py [--data ../shared/datasets/financebench] [--store DIR]

Targets on a 2-core machine: ingest <= 60 s, load <= 1 s, render <= 1 s, search p50 <= 5 ms,
p95 <= 20 ms (CPU time per query is printed too: wall time on a loaded machine is inflated).
"""

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from rlm_docs.corpus import Corpus
from rlm_docs.corpus.search import Ranking
from rlm_docs.ingest import ingest

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "financebench"


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def dir_size_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


def cpu_s() -> float:
    """CPU seconds used so far by this process and its finished children (load-independent)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return result, time.perf_counter() - start


def recall(
    corpus: Corpus, questions: list[dict], ranking: Ranking, boost: bool = True, k: int = 5
) -> tuple[float, float]:
    page_hits = doc_hits = 0
    for q in questions:
        gold = {(e["document"], int(e["page"])) for e in q["evidence"]}
        gold_docs = {d for d, _ in gold}
        hits = corpus.search(q["question"], k=k, boost_names=boost, ranking=ranking)
        page_hits += any((h.document, h.page) in gold for h in hits)
        doc_hits += any(h.document in gold_docs for h in hits)
    return page_hits / len(questions), doc_hits / len(questions)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--store", type=Path, help="store directory (default: a temp dir)")
    args = parser.parse_args()
    text_dir = args.data / "text"
    if not text_dir.is_dir():
        print(f"FinanceBench text not found at {text_dir}; nothing to measure")
        return 1
    tmp = tempfile.TemporaryDirectory(prefix="bench-corpus-")
    store = args.store or Path(tmp.name) / "store"

    print(
        f"load average at start     {os.getloadavg()[0]:.1f} (2 cores; >2 means timings are inflated)"
    )
    cpu0 = cpu_s()
    meta = args.data / "documents.jsonl"
    meta = meta if meta.is_file() else None
    report, ingest_s = timed(ingest, [text_dir], store, metadata=meta)
    ingest_cpu = cpu_s() - cpu0
    _, reingest_s = timed(ingest, [text_dir], store, metadata=meta)
    rss_ingest = peak_rss_mb()
    print(f"documents                 {report.documents}")
    print(f"pages                     {report.pages:,}")
    print(f"tokens (cl100k)           {report.tokens:,}")
    print(f"ingest                    {ingest_s:.1f} s  ({report.pages / ingest_s:,.0f} pages/s)")
    print(f"ingest CPU time           {ingest_cpu:.1f} s (all threads and the index child)")
    print(f"re-ingest, unchanged      {reingest_s:.1f} s")
    print(
        f"store size                {dir_size_mb(store):.0f} MB (bm25/ {dir_size_mb(store / 'bm25'):.0f} MB)"
    )
    print(f"peak RSS after ingest     {rss_ingest:,.0f} MB")

    loads = [timed(Corpus.load, store)[1] for _ in range(3)]
    corpus = Corpus.load(store)
    text, render_s = timed(corpus.render)
    _, locate_first_s = timed(corpus.locate, len(text) // 2)
    _, locate_s = timed(corpus.locate, len(text) // 3)
    print(f"Corpus.load               {statistics.median(loads) * 1000:.0f} ms (median of 3)")
    print(f"render()                  {render_s * 1000:.0f} ms ({len(text) / 1e6:.0f} M chars)")
    print(f"locate() first / next     {locate_first_s * 1000:.1f} ms / {locate_s * 1e6:.0f} us")

    questions = [
        json.loads(line)
        for line in (args.data / "questions.dev.jsonl").read_text().splitlines()
        if line.strip()
    ]
    _, first_search_s = timed(corpus.search, questions[0]["question"])
    latencies, cpu = [], []
    for _ in range(3):
        for q in questions:
            c0 = time.process_time()
            latencies.append(timed(corpus.search, q["question"], k=5)[1])
            cpu.append(time.process_time() - c0)
    latencies.sort()
    cpu.sort()
    n = len(latencies)
    print(f"search first (loads index) {first_search_s * 1000:.0f} ms")
    print(
        f"search p50 / p95          {latencies[n // 2] * 1000:.1f} ms / "
        f"{latencies[int(n * 0.95)] * 1000:.1f} ms wall, {cpu[n // 2] * 1000:.1f} ms / "
        f"{cpu[int(n * 0.95)] * 1000:.1f} ms CPU ({n} queries)"
    )

    plain = Ranking(head=0.0, filing=0.0, named=0.0, implied=0.0, doc=0.0, form=0.0, diverse=False)
    body_only = recall(corpus, questions, plain, boost=False)
    heading = recall(corpus, questions, replace(plain, head=Ranking().head), boost=False)
    default = recall(corpus, questions, Ranking())
    print(f"dev questions             {len(questions)}")
    print("recall@5                  page    doc")
    print(f"  BM25 body only          {body_only[0]:5.1%}  {body_only[1]:5.1%}")
    print(f"  + heading field         {heading[0]:5.1%}  {heading[1]:5.1%}")
    print(f"  default ranking         {default[0]:5.1%}  {default[1]:5.1%}")
    print(f"peak RSS overall          {peak_rss_mb():,.0f} MB")
    print(f"load average at end       {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
