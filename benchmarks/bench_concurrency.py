"""Many concurrent questions on one machine: throughput vs the ideal, memory, threads, fds.

Usage:
    python benchmarks/bench_concurrency.py [--store STORE] [--concurrency 8 32 64]
        [--rounds 3] [--latency 0.5]

For each concurrency C, `eval` runs C x ROUNDS `rlm` questions with the thread executor
(`--workers C`) over STORE (default: the 344-filing FinanceBench store, ingested once into
`$RLM_DOCS_HOME/bench/fb-store` as `bench_sandbox.py` does; the demo corpus without the data)
against a loopback OpenAI-compatible server in its own process, which answers every call after
`--latency` seconds. The scripted root model takes four calls per question, one after the
other: a turn whose cell searches the corpus and prints the best hit, a turn whose cell
makes one `llm_query` sub-call, and a turn that sets the answer (the sub-call is the fourth).
So a question cannot take less than 4 x latency, and the ideal wall time of a run is
questions x calls per question x latency / C (the calls of a question are sequential).

Printed per C, all measured in this run:
- wall time of the question phase (first question submitted to last result; the run's fixed
  cost, loading the store and writing the outputs, is printed apart), questions/s, the ideal
  wall time and wall / ideal (target: <= 1.5);
- CPU seconds per question of the host (eval process, all threads), of the fork server and the
  workers it reaped, and of the loopback server (its own process, so it does not share the
  host's GIL; its CPU still competes for the same two cores), and of the whole machine
  (/proc/stat: everything above plus the kernel's own work and the memory sampler, whose
  share is printed; it samples from a process of its own, so it never holds the host's GIL);
- peak host RSS (the eval process), peak PSS of the whole tree (host, fork server, workers:
  shared pages counted once), the fork server's RSS;
- sandbox workers alive at the peak, and their private memory (USS: Private_Clean +
  Private_Dirty of /proc/PID/smaps_rollup), mean and max;
- peak threads and open file descriptors of the host process, and the fds of one worker.
The machine is shared: the load average before and after each run is printed with it.
"""

import argparse
import json
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_sandbox import financebench_store  # noqa: E402

from rlm_docs.eval.executor import ThreadExecutor  # noqa: E402
from rlm_docs.eval.runner import EvalSettings, run_eval  # noqa: E402
from tests.servers.chat import ChatServer  # noqa: E402

SUB_MARK = "SUB-CALL:"
TURNS = (
    '```repl\nhits = search("total revenue", k=3)\nprint(hits[0] if hits else "none")\n```',
    f'```repl\nnote = llm_query("{SUB_MARK} which year is the revenue for?")\nprint(note)\n```',
    '```repl\nanswer["content"] = {"answer": [note], "citations": []}\nanswer["ready"] = True\n```',
)


def scripted_reply(messages: list[dict]) -> str:
    """The root's turn N gets TURNS[N] (N = assistant messages so far); a sub-call a line."""
    if SUB_MARK in str(messages[-1].get("content")):
        return "fiscal 2022"
    turn = sum(1 for m in messages if m.get("role") == "assistant")
    return TURNS[min(turn, len(TURNS) - 1)]


def _serve(latency: float, port: "multiprocessing.Queue[str]", stop) -> None:
    with ChatServer(scripted_reply, latency_s=latency) as srv:
        port.put(srv.base_url)
        stop.wait()


class TimedExecutor(ThreadExecutor):
    """The thread executor, noting when the first question was submitted and the last ended."""

    def map_unordered(self, fn, items):
        self.start = self.end = time.perf_counter()
        for result in super().map_unordered(fn, items):
            self.end = time.perf_counter()
            yield result


def _cpu_s(pid: int, children: bool = False) -> float:
    """utime + stime of `pid` (and of its reaped children), seconds; 0 when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = sum(int(x) for x in fields[11 : 13 + (2 if children else 0)])
    return ticks / os.sysconf("SC_CLK_TCK")


def _machine_busy_s() -> float:
    """CPU seconds the whole machine has been busy (all but idle and iowait, /proc/stat)."""
    ticks = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(ticks[:8]) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


def _vm_rss_kb(pid: int) -> int:
    """VmRSS of /proc/PID/status: kept by the kernel as a counter, so cheap to read often."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _rollup(pid: int) -> dict[str, int]:
    """kB figures of /proc/PID/smaps_rollup (Rss, Pss, Private_*), {} when the process is gone."""
    out: dict[str, int] = {}
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return out
    for line in text.splitlines()[1:]:
        key, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            out[key] = int(parts[0])
    return out


def _children(pid: int) -> list[int]:
    kids: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            text = Path(f"/proc/{pid}/task/{task}/children").read_text()
            kids += [int(x) for x in text.split()]
    except OSError:
        pass
    return kids


def _count(path: str) -> int:
    try:
        return len(os.listdir(path))
    except OSError:
        return 0


class Sampler:
    """Polls the eval's process tree and keeps the peaks, from a process of its own: in the
    eval's process its parsing would compete for the host's GIL, and reading 64 workers'
    `smaps_rollup` (a walk of each one's page tables) every quarter second cost about two
    core-seconds per 10 s run. So the host's RSS, threads and fds are read every `period`
    seconds from counters the kernel keeps, and the smaps of the tree (PSS, worker USS) every
    `worker_period`. Its own CPU is reported apart from the figures it measures."""

    def __init__(self, pid: int, period: float = 0.25, worker_period: float = 2.0) -> None:
        ctx = multiprocessing.get_context("spawn")
        self._ready, self._stop = ctx.Event(), ctx.Event()
        self._out: multiprocessing.Queue[dict] = ctx.Queue()
        args = (pid, period, worker_period, self._ready, self._stop, self._out)
        self._proc = ctx.Process(target=_sample, args=args, daemon=True)

    def start(self) -> None:
        """Start sampling; returns once the sampler runs (its imports are not in the run)."""
        self._proc.start()
        self._ready.wait(timeout=60)

    def finish(self) -> dict:
        """Stop sampling: the peaks, `uss` (kB per worker at the sample with the most
        workers), `worker_fds` and `cpu_s` (the sampler's own CPU seconds)."""
        self._stop.set()
        result = self._out.get(timeout=60)
        self._proc.join(timeout=10)
        return result


def _sample(pid: int, period: float, worker_period: float, ready, stop, out) -> None:
    cpu0 = sum(os.times()[:2])
    ready.set()
    peak: dict[str, float] = {}
    uss: list[int] = []
    worker_fds = 0
    next_workers = 0.0

    def note(key: str, value: float) -> None:
        peak[key] = max(peak.get(key, 0), value)

    while not stop.is_set():
        note("host_rss_kb", _vm_rss_kb(pid))
        note("threads", _count(f"/proc/{pid}/task"))
        note("fds", _count(f"/proc/{pid}/fd"))
        if time.monotonic() >= next_workers:
            next_workers = time.monotonic() + worker_period
            tree_pss = _rollup(pid).get("Pss", 0)
            servers = [p for p in _children(pid) if _is_fork_server(p)]
            workers = [w for z in servers for w in _children(z)]
            for z in servers:
                roll = _rollup(z)
                tree_pss += roll.get("Pss", 0)
                note("fork_server_rss_kb", roll.get("Rss", 0))
            sizes = []
            for w in workers:
                roll = _rollup(w)
                if roll:
                    tree_pss += roll.get("Pss", 0)
                    sizes.append(roll.get("Private_Clean", 0) + roll.get("Private_Dirty", 0))
            note("tree_pss_kb", tree_pss)
            if sizes and len(sizes) >= peak.get("workers", 0):
                uss = sizes
            worker_fds = max([worker_fds] + [_count(f"/proc/{w}/fd") for w in workers])
            note("workers", len(sizes))
        stop.wait(period)
    out.put(
        {"peak": peak, "uss": uss, "worker_fds": worker_fds, "cpu_s": sum(os.times()[:2]) - cpu0}
    )


def _is_fork_server(pid: int) -> bool:
    try:
        return b"fork_server" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _dataset(path: Path, n: int) -> Path:
    rows = [
        {
            "id": f"c{i:04d}",
            "question": f"What was the total revenue in fiscal 2022? (case {i})",
            "answer_variants": [["fiscal 2022"]],
            "evidence": [],
            "question_type": "extractive",
        }
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def run_once(
    store: Path, server: int, url: str, concurrency: int, rounds: int, latency: float, tmp: Path
) -> float:
    n = concurrency * rounds
    settings = EvalSettings(
        dataset=_dataset(tmp / f"q{concurrency}.jsonl", n),
        corpus=store,
        system="rlm",
        model=f"openai:gpt-5-mini@{url}",
        out=tmp / f"run{concurrency}",
        workers=concurrency,
        progress=False,
    )
    load_before = os.getloadavg()[0]
    forkers = [p for p in _children(os.getpid()) if _is_fork_server(p)]
    cpu0 = (sum(os.times()[:2]), _cpu_s(server), sum(_cpu_s(p, True) for p in forkers))
    sampler = Sampler(os.getpid())
    sampler.start()
    busy0 = _machine_busy_s()
    executor = TimedExecutor(concurrency)
    t0 = time.perf_counter()
    summary = run_eval(settings, executor)
    total = time.perf_counter() - t0
    busy = _machine_busy_s() - busy0
    sampled = sampler.finish()
    wall = executor.end - executor.start
    forkers = [p for p in _children(os.getpid()) if _is_fork_server(p)]
    cpu1 = (sum(os.times()[:2]), _cpu_s(server), sum(_cpu_s(p, True) for p in forkers))
    host_cpu, server_cpu, fork_cpu = (b - a for a, b in zip(cpu0, cpu1, strict=True))
    ledger = [json.loads(x) for x in (settings.out / "ledger.jsonl").read_text().splitlines()]
    calls = len(ledger) / n
    failed = summary["status"]["failed"]
    ideal = n * calls * latency / concurrency
    uss = sampled["uss"] or [0]
    p = sampled["peak"]
    print(
        f"C={concurrency:>3}: {n} questions ({failed} failed), {calls:.2f} calls/q, "
        f"questions {wall:6.1f}s (run {total:5.1f}s), {n / wall:5.2f} q/s, ideal {ideal:5.1f}s, "
        f"wall/ideal {wall / ideal:4.2f}"
    )
    print(
        f"       CPU per question: host {host_cpu / n * 1000:4.0f} ms, fork server + workers "
        f"{fork_cpu / n * 1000:4.0f} ms, loopback server {server_cpu / n * 1000:4.0f} ms; "
        f"the whole machine {busy / n * 1000:4.0f} ms ({busy / total / (os.cpu_count() or 1):.0%} "
        f"busy; the sampler {sampled['cpu_s'] / n * 1000:.0f} ms of it)"
    )
    print(
        f"       host RSS peak {p.get('host_rss_kb', 0) / 1024:7.0f} MB, tree PSS peak "
        f"{p.get('tree_pss_kb', 0) / 1024:7.0f} MB, fork server RSS "
        f"{p.get('fork_server_rss_kb', 0) / 1024:6.0f} MB; workers at peak {int(p.get('workers', 0))}, "
        f"USS mean {sum(uss) / len(uss) / 1024:5.1f} MB max {max(uss) / 1024:5.1f} MB"
    )
    print(
        f"       host threads peak {int(p.get('threads', 0))}, host fds peak "
        f"{int(p.get('fds', 0))}, fds of a worker (max) {sampled['worker_fds']}; load average "
        f"{load_before:.2f} before, {os.getloadavg()[0]:.2f} after"
    )
    return wall / ideal


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, help="corpus store (default: FinanceBench)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[8, 32, 64])
    parser.add_argument("--rounds", type=int, default=3, help="questions per slot (default 3)")
    parser.add_argument("--latency", type=float, default=0.5)
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-000000000000000000")
    os.environ["RLM_DOCS_CACHE"] = "off"
    from rlm_docs.corpus import Corpus
    from rlm_docs.ingest.demo import demo_corpus_path

    store = financebench_store(args.store) or demo_corpus_path()
    corpus = Corpus.load(store)
    print(
        f"store {store}: {len(corpus.documents)} documents, {corpus.total_pages:,} pages; "
        f"{os.cpu_count()} CPUs; latency {args.latency}s per call; uptime load "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    ctx = multiprocessing.get_context("spawn")
    port, stop = ctx.Queue(), ctx.Event()
    server = ctx.Process(target=_serve, args=(args.latency, port, stop), daemon=True)
    server.start()
    url = port.get(timeout=60)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            warm = Path(tmp) / "warm"
            warm.mkdir()
            # the fork server's start and the imports, not timed
            run_once(store, server.pid, url, 2, 1, args.latency, warm)
            print("(warm-up above: fork server start and imports)")
            for c in args.concurrency:
                run_once(store, server.pid, url, c, args.rounds, args.latency, Path(tmp))
    finally:
        stop.set()
        server.join(timeout=10)


if __name__ == "__main__":
    main()
