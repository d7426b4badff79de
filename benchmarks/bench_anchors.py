"""rlm-docs against the libraries it builds on: each figure as a ratio to an anchor measured in
the same run, so a loaded machine inflates both sides alike.

| part   | rlm-docs                                   | anchor (same run)                       | goal   |
|--------|--------------------------------------------|-----------------------------------------|--------|
| ingest | `ingest` of the FinanceBench text files    | read files, split pages at form feeds,  | <= 2.0 |
|        | (store with token counts, BM25 indexes)    | `bm25s.tokenize` + `BM25().index`       |        |
| search | `Corpus.search(q, k=10)` p50, dev questions | `bm25s` retrieve (k=10) on the same pages | <= 4 |
| cell   | sandbox trivial cell (`x = 1`) p50         | IPython `run_cell` p50 (no isolation)   | <= 1.5 |
| fork   | a new fork server over the store to a first cell (seconds, median) | -      | <= 2 s |

Rounds alternate anchor and rlm-docs and report medians; the load average is printed beside
every part (2 cores: above 2, timings are inflated). CPU seconds are printed too (ingest counts
the index child).

    python benchmarks/bench_anchors.py [--data ../shared/datasets/financebench] [--store DIR]
        [--parts ingest,search,cell,fork] [--rounds N] [--cells N]

Without `--store` the search and fork parts use the store the ingest part wrote (or ingest one
into a temporary directory). Exits 0 with a message when the data set is absent.
"""

import argparse
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import bm25s
import Stemmer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rlm_docs.corpus import Corpus  # noqa: E402
from rlm_docs.ingest import ingest  # noqa: E402
from rlm_docs.repl import CorpusSandbox  # noqa: E402
from sandbox import Limits, Sandbox, fork_server_pool  # noqa: E402
from sandbox.confine import process_cpu_s  # noqa: E402
from sandbox.host import REPLY_SPIN_S  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "financebench"
PARTS = ("ingest", "search", "cell", "fork")
GOALS = {"ingest": 2.0, "search": 4.0, "cell": 1.5}
CELL = "x = 1"
K = 10


def load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


def cpu_s() -> float:
    """CPU seconds of this process and its finished children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one call."""
    c0, t0 = cpu_s(), time.perf_counter()
    fn()
    return time.perf_counter() - t0, cpu_s() - c0


def p50(fn: Callable[[], object], n: int, warm: int = 20) -> float:
    for _ in range(warm):
        fn()
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def ratio_line(what: str, ours: float, anchor: float, unit: str, scale: float) -> None:
    goal = GOALS[what]
    ratio = ours / anchor
    mark = "ok" if ratio <= goal else "over"
    print(
        f"{what:<7}{ratio:6.2f}x  (goal <= {goal}x, {mark})   rlm-docs {ours * scale:9.3f} {unit}"
        f"   anchor {anchor * scale:9.3f} {unit}   {load()}"
    )


def pages_of(text_dir: Path) -> list[str]:
    """The anchor's reading: every file split at form feeds (the trailing empty chunk the
    final form feed leaves is dropped, as the pdftotext reader drops it)."""
    pages: list[str] = []
    for f in sorted(text_dir.glob("*.txt")):
        chunks = f.read_text(encoding="utf-8").split("\f")
        pages.extend(chunks[:-1] if chunks and not chunks[-1].strip() else chunks)
    return pages


def stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


def bm25s_index(pages: list[str]) -> bm25s.BM25:
    tokens = bm25s.tokenize(pages, stopwords="en", stemmer=stemmer(), show_progress=False)
    retriever = bm25s.BM25()
    retriever.index(tokens, show_progress=False)
    return retriever


def bench_ingest(data: Path, out: Path, rounds: int) -> None:
    text_dir = data / "text"
    meta = data / "documents.jsonl"
    ours, anchor, ours_cpu, anchor_cpu = [], [], [], []
    for i in range(rounds):
        wall, cpu = timed(lambda: bm25s_index(pages_of(text_dir)))
        anchor.append(wall)
        anchor_cpu.append(cpu)
        shutil.rmtree(out, ignore_errors=True)  # a fresh ingest each round, not a re-ingest
        wall, cpu = timed(lambda: ingest([text_dir], out, metadata=meta))
        ours.append(wall)
        ours_cpu.append(cpu)
        print(f"  ingest round {i + 1}: rlm-docs {wall:.1f} s, anchor {anchor[-1]:.1f} s, {load()}")
    ratio_line("ingest", statistics.median(ours), statistics.median(anchor), "s", 1)
    print(
        f"       CPU: rlm-docs {statistics.median(ours_cpu):.1f} s (with the index child), "
        f"anchor {statistics.median(anchor_cpu):.1f} s"
    )


def questions_of(data: Path) -> list[str]:
    lines = (data / "questions.dev.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["question"] for line in lines if line.strip()]


def bench_search(data: Path, store: Path, rounds: int) -> None:
    """Each question timed on both sides in turn (so load hits both alike), `rounds` passes;
    p50 over all samples."""
    corpus = Corpus.load(store)
    questions = questions_of(data)
    retriever = bm25s_index(corpus._text.to_pylist())
    stem = stemmer()

    def anchor(q: str) -> None:
        ids = bm25s.tokenize(q, stopwords="en", stemmer=stem, show_progress=False)
        retriever.retrieve(ids, k=K, show_progress=False)

    ours: list[float] = []
    anchors: list[float] = []
    ours_cpu: list[float] = []
    anchors_cpu: list[float] = []
    for q in questions:  # warm both: memory-mapped index pages, caches
        corpus.search(q, k=K)
        anchor(q)
    for _ in range(rounds):
        for q in questions:
            for fn, wall, cpu in (
                (anchor, anchors, anchors_cpu),
                (lambda q: corpus.search(q, k=K), ours, ours_cpu),
            ):
                c0, t0 = time.process_time(), time.perf_counter()
                fn(q)
                wall.append(time.perf_counter() - t0)
                cpu.append(time.process_time() - c0)
    ratio_line("search", statistics.median(ours), statistics.median(anchors), "ms", 1000)
    print(
        f"       CPU p50: rlm-docs {statistics.median(ours_cpu) * 1000:.3f} ms, anchor "
        f"{statistics.median(anchors_cpu) * 1000:.3f} ms, ratio "
        f"{statistics.median(ours_cpu) / statistics.median(anchors_cpu):.2f}x (less sensitive to "
        f"load than wall time); {len(ours)} searches ({len(questions)} questions x {rounds}), k={K}"
    )


def bench_cell(cells: int, rounds: int) -> None:
    """Wall time p50 per cell, and CPU per cell on each side: the host polls for a quick reply
    before it sleeps (`sandbox.host.REPLY_SPIN_S`), which spends CPU to save wake-ups."""
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    ours, anchor = [], []
    host_cpu = worker_cpu = anchor_cpu = 0.0
    with Sandbox(limits=Limits(wall_s=30)) as sb:
        for _ in range(rounds):
            c0 = time.process_time()
            anchor.append(p50(lambda: shell.run_cell(CELL, store_history=False), cells))
            c1, w1 = time.process_time(), process_cpu_s(sb.pid)
            ours.append(p50(lambda: sb.run(CELL), cells))
            anchor_cpu += c1 - c0
            host_cpu += time.process_time() - c1
            worker_cpu += process_cpu_s(sb.pid) - w1
    ratio_line("cell", statistics.median(ours), statistics.median(anchor), "ms", 1000)
    per_cell = 1e6 / (rounds * (cells + 20))  # p50 runs 20 warm-up cells before its samples
    print(
        f"       CPU per cell: rlm-docs {host_cpu * per_cell:.0f} us host + "
        f"{worker_cpu * per_cell:.0f} us worker, anchor {anchor_cpu * per_cell:.0f} us; "
        f"host polls {REPLY_SPIN_S * 1e6:.0f} us for a reply before it sleeps"
    )


def bench_fork(store: Path, rounds: int) -> None:
    runs = []
    phases: dict[str, float] = {}
    for _ in range(max(3, rounds)):
        fork_server_pool.shutdown_idle()
        t0 = time.perf_counter()
        with CorpusSandbox(corpus=store) as sb:
            sb.run("1")
            runs.append(time.perf_counter() - t0)
            phases = sb.start_phases
    seconds = statistics.median(runs)
    mark = "ok" if seconds <= 2.0 else "over"
    shown = ", ".join(f"{k} {v:.3f}" for k, v in phases.items())
    print(f"fork   {seconds:6.3f} s  (goal <= 2 s, {mark})   phases (s): {shown}   {load()}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--store", type=Path, help="FinanceBench store for search and fork")
    parser.add_argument("--parts", default=",".join(PARTS), help="comma-separated subset")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cells", type=int, default=2000)
    args = parser.parse_args()
    parts = [p for p in args.parts.split(",") if p]
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        parser.error(f"unknown part(s) {', '.join(unknown)} (choose from {', '.join(PARTS)})")
    if args.store is not None and not (args.store / "manifest.json").is_file():
        parser.error(
            f"--store {args.store}: no corpus store there (write one with `rlm-docs ingest`)"
        )
    if not (args.data / "text").is_dir():
        print(f"FinanceBench not found at {args.data}; nothing to measure (pass --data)")
        return 0
    print(f"{os.cpu_count()} cores, {load()} at start")
    tmp = tempfile.TemporaryDirectory(prefix="bench-anchors-")
    store = args.store
    if "ingest" in parts:
        built = Path(tmp.name) / "store"
        bench_ingest(args.data, built, args.rounds)
        store = store or built
    if store is None and {"search", "fork"} & set(parts):
        store = Path(tmp.name) / "store"
        ingest([args.data / "text"], store, metadata=args.data / "documents.jsonl")
    if "search" in parts:
        bench_search(args.data, store, args.rounds)
    if "cell" in parts:
        bench_cell(args.cells, args.rounds)
    if "fork" in parts:
        bench_fork(store, args.rounds)
    print(f"{load()} at end")
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
