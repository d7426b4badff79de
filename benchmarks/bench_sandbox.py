"""Sandbox benchmark: cell round trips, host RPC, worker start and memory.

Measured in one run and printed with ratios:
1. Trivial cell (`x = 1`) round trip p50/p95 through the sandbox, against in-process `exec` of
   the same source (compile + run) and IPython's `InteractiveShell.run_cell` (target: sandbox
   p50 <= 1 ms).
2. A cell making one host RPC (`echo(1)`), p50/p95.
3. Worker start (until a first cell has run) without a corpus and with the FinanceBench store
   (~50k pages): with nothing cached (renders the context, fills the cache); in a fresh fork server
   (what a new process pays: imports, Parquet load, cached context; target <= 2 s); and with
   the corpus's fork server already running (every later start and every restart: a fork).
4. Worker memory: RSS (includes pages shared copy-on-write with the fork server) and private memory
   (what each additional worker really costs).

Run: `/work/venv/bin/python benchmarks/bench_sandbox.py [--store DIR] [--cells N]`. Without
`--store`, the FinanceBench text files are ingested once into `$RLM_DOCS_HOME/bench/fb-store`
(about a minute; later runs reuse it). The corpus part is skipped when the data set is absent.
"""

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rlm_docs.repl import CorpusSandbox  # noqa: E402
from rlm_docs.repl.context_cache import cache_key  # noqa: E402
from rlm_docs.resources import home_dir  # noqa: E402
from sandbox import Limits, Sandbox, fork_server_pool  # noqa: E402

FINANCEBENCH = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "financebench"
CELL = "x = 1"


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[int(0.95 * (len(ordered) - 1))]


def timed_runs(fn: Callable[[], object], n: int) -> list[float]:
    for _ in range(min(50, n)):
        fn()
    out = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def private_mb(pid: int) -> float:
    """Memory only this worker holds (USS: private pages, not shared with its fork server)."""
    fields = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()
    kb = sum(int(line.split()[1]) for line in fields if line.startswith("Private_"))
    return kb / 1024


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def start_time(**kwargs: object) -> tuple[float, float, float]:
    """Seconds until a first cell has run; the idle worker's RSS and private memory in MB."""
    start = time.perf_counter()
    with CorpusSandbox(**kwargs) as sb:
        sb.run("1")
        elapsed = time.perf_counter() - start
        return elapsed, rss_mb(sb.pid), private_mb(sb.pid)


def show(label: str, runs: list[tuple[float, float, float]], note: str = "") -> float:
    seconds = statistics.median(r[0] for r in runs)
    rss = statistics.median(r[1] for r in runs)
    uss = statistics.median(r[2] for r in runs)
    print(f"{label:<34}{seconds:8.3f} s   RSS {rss:6.0f} MB, private {uss:5.0f} MB  {note}")
    return seconds


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.3f} ms"


def bench_cells(n: int) -> None:
    from IPython.core.interactiveshell import InteractiveShell

    namespace: dict = {}
    exec_p50, exec_p95 = percentiles(timed_runs(lambda: exec(CELL, namespace), n))
    shell = InteractiveShell.instance()
    ipy_p50, ipy_p95 = percentiles(timed_runs(lambda: shell.run_cell(CELL, store_history=False), n))
    with Sandbox(limits=Limits(wall_s=30), functions={"echo": lambda v: v}) as sb:
        sb_p50, sb_p95 = percentiles(timed_runs(lambda: sb.run(CELL), n))
        rpc_p50, rpc_p95 = percentiles(timed_runs(lambda: sb.run("echo(1)"), n))
    print(f"trivial cell, {n} runs            p50        p95")
    print(f"  in-process exec            {ms(exec_p50)}  {ms(exec_p95)}")
    print(f"  IPython run_cell           {ms(ipy_p50)}  {ms(ipy_p95)}")
    print(f"  sandbox run                {ms(sb_p50)}  {ms(sb_p95)}   (target p50 <= 1 ms)")
    print(f"  ratio sandbox / exec       {sb_p50 / exec_p50:8.1f} x")
    print(f"  ratio sandbox / IPython    {sb_p50 / ipy_p50:8.2f} x")
    print(f"cell with one host RPC       {ms(rpc_p50)}  {ms(rpc_p95)}")
    print(f"  RPC cost over trivial cell {ms(rpc_p50 - sb_p50)}")


def financebench_store(path: Path | None) -> Path | None:
    if path is not None:
        return path
    if not (FINANCEBENCH / "text").is_dir():
        return None
    from rlm_docs.ingest.pipeline import ingest

    store = home_dir() / "bench" / "fb-store"
    started = time.perf_counter()
    report = ingest([FINANCEBENCH / "text"], store)
    print(
        f"FinanceBench store {store}: {report.pages} pages ({time.perf_counter() - started:.1f} s)"
    )
    return store


def bench_starts(store: Path | None, warm_runs: int) -> None:
    fork_server_pool.shutdown_idle()
    first = show("worker start, no corpus (first)", [start_time()], "(starts the fork server)")
    show("worker start, no corpus (next)", [start_time() for _ in range(5)], "(fork)")
    if store is None:
        print("corpus start skipped: FinanceBench data not found (pass --store)")
        return
    (home_dir() / "sandbox" / f"context-{cache_key(store)}.bin").unlink(missing_ok=True)
    fork_server_pool.shutdown_idle()
    show("corpus start, nothing cached", [start_time(corpus=store)], "(renders, fills cache)")
    cold = []
    for _ in range(warm_runs):
        fork_server_pool.shutdown_idle()
        cold.append(start_time(corpus=store))
    cold_s = show("corpus start, new fork server", cold, "(target <= 2 s)")
    warm_s = show("corpus start, fork server running", [start_time(corpus=store) for _ in range(5)])
    print(f"  ratio new fork server / no corpus   {cold_s / first:8.1f} x")
    print(f"  ratio running / no corpus      {warm_s / first:8.1f} x")
    with CorpusSandbox(corpus=store) as sb:
        print(f"  fork server phases (s): {sb.start_phases}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="corpus store to start workers with")
    parser.add_argument("--cells", type=int, default=2000, help="cells per round-trip measurement")
    parser.add_argument("--starts", type=int, default=3, help="warm corpus starts to time")
    args = parser.parse_args()
    bench_cells(args.cells)
    bench_starts(financebench_store(args.store), args.starts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
