"""Ray executor throughput: questions per second on a 1-node and a 2-node Ray cluster.

Usage:
    python benchmarks/bench_ray.py [--questions N] [--latency S] [--workers W]

Both clusters run on this machine (`tests/fixtures/ray_cluster`, 127.0.0.1), so the second node
adds actors, sandboxes and concurrency but no cores: the figures show what the executor adds
around model latency, not a second machine's CPUs. Each question is an `rlm` run in the
node's sandbox against a loopback chat server that takes `--latency` seconds per reply (two
root turns: one code cell, then the final answer, plus the engine's answer extraction).

Figures, all measured in this run, for 1 and 2 nodes with W questions in flight per node:
- start: seconds until the first result, and the startup overhead in it (start minus one
  question's model time: actor start, corpus load, first fork server);
- wall: seconds for all N questions; q/s: N / wall;
- run q/s: N / (wall - startup overhead), against the ideal nodes x W / (calls per question x
  latency), i.e. the executor's efficiency once started.
"""

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rlm_docs.eval.dataset import load_questions  # noqa: E402
from rlm_docs.eval.question_task import QuestionTask  # noqa: E402
from tests.fixtures.eval.support import QUESTIONS, build_store  # noqa: E402
from tests.fixtures.ray_cluster import loopback_cluster, skip_reason  # noqa: E402
from tests.servers.chat import ChatServer  # noqa: E402


def reply(messages: list[dict]) -> str:
    """Turn 1: a code cell (the sandbox runs it); turn 2: the final answer."""
    if not any(m["role"] == "assistant" for m in messages):
        return '```repl\nhits = search("revenue", k=3)\nprint(len(hits))\n```'
    return "FINAL(4.2 billion)"


def run(nodes: int, data: Path, store: Path, srv: ChatServer, workers: int) -> dict:
    from rlm_docs.eval.ray_executor import RayExecutor

    questions = load_questions(data)
    task = QuestionTask(
        corpus=str(store), system="rlm", model=f"openai:fake@{srv.base_url}", trajectories=None
    )
    before = len(srv.requests)
    with loopback_cluster(nodes=nodes):
        t0 = time.perf_counter()
        stamps = []
        for record in RayExecutor(workers).map_unordered(task, questions):
            assert record["status"] == "ok", record.get("error")
            stamps.append(time.perf_counter() - t0)
    n = len(stamps)
    calls = (len(srv.requests) - before) / n
    overhead = stamps[0] - calls * srv.latency_s
    return {
        "nodes": nodes,
        "start_s": stamps[0],
        "overhead_s": overhead,
        "wall_s": stamps[-1],
        "throughput": n / stamps[-1],
        "running": n / (stamps[-1] - overhead),
        "ideal": nodes * workers / (calls * srv.latency_s),
        "calls": calls,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=96)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--workers", type=int, default=8)
    args = parser.parse_args()
    reason = skip_reason(nodes=2)
    if reason:
        sys.exit(f"bench_ray: {reason}")
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-000000000000000000")
    os.environ["RLM_DOCS_CACHE"] = "off"
    with tempfile.TemporaryDirectory() as tmp, ChatServer(reply, latency_s=args.latency) as srv:
        root = Path(tmp)
        os.environ.setdefault("RLM_DOCS_HOME", str(root / "home"))
        store = build_store(root / "store")
        base = [json.loads(x) for x in QUESTIONS.read_text().splitlines()]
        data = root / "q.jsonl"
        data.write_text(
            "".join(
                json.dumps({**base[i % len(base)], "id": f"b{i}"}) + "\n"
                for i in range(args.questions)
            )
        )
        print(
            f"{args.questions} rlm questions, {args.latency}s per model reply, "
            f"{args.workers} in flight per node (one machine: 2 cores)"
        )
        print("nodes  start s  (overhead)  wall s  q/s    run q/s  ideal q/s  run/ideal  calls/q")
        rows = [run(nodes, data, store, srv, args.workers) for nodes in (1, 2)]
        for r in rows:
            print(
                f"{r['nodes']:>5}  {r['start_s']:7.1f}  ({r['overhead_s']:6.1f})  "
                f"{r['wall_s']:6.1f}  {r['throughput']:5.2f}  {r['running']:7.2f}  "
                f"{r['ideal']:9.2f}  {r['running'] / r['ideal']:9.2f}  {r['calls']:7.1f}"
            )
        ratio = rows[1]["throughput"] / rows[0]["throughput"]
        running = rows[1]["running"] / rows[0]["running"]
        print(f"2 nodes vs 1: {ratio:.2f}x q/s overall, {running:.2f}x once started")


if __name__ == "__main__":
    main()
