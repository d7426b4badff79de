"""`rlm-docs serve` overhead: latency over a direct `RLM.ask`, and memory per concurrent run.

Latency: the same questions (the demo questions, cycled to `--asks` asks) answered by the
offline model, in-process with `RLM.ask` and through a `rlm-docs serve` subprocess with the
official `openai` client, interleaved one by one; p50 of each, of the per-question difference,
and of the HTTP + server share (client latency minus the run's own wall time).
Memory: total PSS (proportional set size, so pages shared after fork count once) of the server's
process tree (server, sandbox fork server and workers) sampled every 20 ms, idle and while K
requests run at once; (peak - idle) / K is the memory one concurrent run costs.

    python benchmarks/bench_serve.py [--store STORE] [--asks 20] [--concurrency 1,2,4]

Default store: the bundled demo corpus. Figures on a loaded 2-core machine are noisy.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import openai

from rlm_docs.engine import RLM
from rlm_docs.ingest.demo import demo_corpus_path, demo_questions_path


def questions(n: int) -> list[str]:
    rows = [json.loads(line) for line in demo_questions_path().read_text().splitlines() if line]
    return [rows[i % len(rows)]["question"] for i in range(n)]


def start_server(store: Path, max_runs: int, log: Path) -> tuple[subprocess.Popen, str]:
    env = dict(os.environ) | {"RLM_DOCS_CACHE": "off", "RLM_DOCS_MODEL": "offline"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "rlm_docs", "serve", "--corpus", str(store), "--port", "0"]
        + ["--max-runs", str(max_runs), "--model", "offline"],
        stdout=subprocess.DEVNULL,
        stderr=log.open("w"),
        env=env,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = re.search(r"listening on (http://\S+)", log.read_text())
        if found:
            return proc, found.group(1)
        time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"serve did not start: {log.read_text()}")


def tree(root: int) -> list[int]:
    """`root` and all its descendants (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, []))
    return out


def pss_mb(root: int) -> float:
    total = 0
    for pid in tree(root):
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def ask(client: openai.OpenAI, question: str) -> tuple[float, float]:
    """(latency seen by the client, the run's own wall time reported in `rlm_docs.wall_s`)."""
    t0 = time.perf_counter()
    resp = client.chat.completions.create(
        model="rlm-docs", messages=[{"role": "user", "content": question}]
    )
    return time.perf_counter() - t0, resp.model_extra["rlm_docs"]["wall_s"]


def memory_under(client: openai.OpenAI, pid: int, k: int, qs: list[str]) -> float:
    """Peak tree PSS while `k` requests run at once."""
    peak = pss_mb(pid)
    threads = [threading.Thread(target=ask, args=(client, qs[i % len(qs)])) for i in range(k)]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        peak = max(peak, pss_mb(pid))
        time.sleep(0.02)
    return peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", help="corpus store (default: the demo corpus)")
    parser.add_argument("--asks", type=int, default=20)
    parser.add_argument("--concurrency", default="1,2,4")
    args = parser.parse_args()
    store = Path(args.store) if args.store else demo_corpus_path()
    qs = questions(args.asks)
    levels = [int(k) for k in args.concurrency.split(",")]

    rlm = RLM(store, model="offline")
    rlm.ask(qs[0])  # warm: fork server started, corpus mapped, tokenizer loaded
    direct: list[float] = []
    pairs: list[tuple[float, float]] = []

    with tempfile.TemporaryDirectory() as tmp:
        proc, url = start_server(store, max(levels), Path(tmp) / "serve.log")
        try:
            client = openai.OpenAI(base_url=url + "/v1", api_key="none", max_retries=0)
            ask(client, qs[0])  # warm
            for q in qs:  # interleaved, so load drifts hit both sides alike
                t0 = time.perf_counter()
                rlm.ask(q)
                direct.append(time.perf_counter() - t0)
                pairs.append(ask(client, q))
            served = [latency for latency, _ in pairs]
            transport = [latency - wall for latency, wall in pairs]
            time.sleep(0.5)
            idle = pss_mb(proc.pid)
            peaks = {k: memory_under(client, proc.pid, k, qs) for k in levels}
        finally:
            proc.terminate()
            proc.wait(30)

    p50_direct, p50_served = statistics.median(direct), statistics.median(served)
    diffs = [s - d for s, d in zip(served, direct, strict=True)]
    print(f"store                         {store}")
    print(f"asks                          {len(qs)} (the demo questions, cycled), offline model")
    print(f"direct RLM.ask p50            {p50_direct * 1000:8.1f} ms")
    print(f"through serve p50             {p50_served * 1000:8.1f} ms")
    print(
        f"overhead p50 (paired)         {statistics.median(diffs) * 1000:8.1f} ms "
        f"({p50_served / p50_direct:.2f}x)"
    )
    print(
        f"HTTP + server share p50      {statistics.median(transport) * 1000:8.1f} ms "
        "(client latency - the run's own wall time)"
    )
    print(f"server tree PSS idle          {idle:8.1f} MB")
    for k, peak in peaks.items():
        print(
            f"peak PSS, {k} concurrent run(s) {peak:8.1f} MB  -> {(peak - idle) / k:6.1f} MB per run"
        )


if __name__ == "__main__":
    main()
