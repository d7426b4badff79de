"""Evaluation speed: parallel questions in the runner, and the vectorised Kuiper bootstrap.

Usage:
    python benchmarks/bench_eval.py [--questions N] [--latency S] [--workers W]

Figures, all measured in this run:

- runner wall time for N static-rag questions against a loopback chat server that takes
  `--latency` seconds per reply, with 1 worker and with W workers, and their ratio (the
  speed-up of running questions in parallel; ideal = W);
- K/N bootstrap interval for 67 and 2,000 questions with 1,000 resamples: the vectorised resampler
  (`kuiper_bootstrap`) vs one `kuiper()` call per resample, their ratio, and whether both give
  the same interval.
"""

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rlm_docs.eval.effort import kuiper, kuiper_bootstrap  # noqa: E402
from rlm_docs.eval.runner import EvalSettings, run_eval  # noqa: E402
from tests.fixtures.eval.support import QUESTIONS, build_store, fake_model  # noqa: E402
from tests.servers.chat import ChatServer  # noqa: E402


def bench_runner(n: int, latency: float, workers: int) -> None:
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-000000000000000000")
    os.environ["RLM_DOCS_CACHE"] = "off"
    with tempfile.TemporaryDirectory() as tmp, ChatServer(fake_model, latency_s=latency) as srv:
        root = Path(tmp)
        store = build_store(root / "store")
        base = [json.loads(x) for x in QUESTIONS.read_text().splitlines()]
        data = root / "q.jsonl"
        data.write_text(
            "".join(json.dumps({**base[i % 6], "id": f"b{i}"}) + "\n" for i in range(n))
        )
        times = {}
        for w in (0, 1, workers):  # w = 0: an untimed warm-up (imports, search index)
            settings = EvalSettings(
                dataset=data,
                corpus=store,
                system="static-rag",
                model=f"openai:fake@{srv.base_url}",
                out=root / f"run{w}",
                workers=max(w, 1),
                limit=2 if w == 0 else None,
                progress=False,
            )
            t0 = time.perf_counter()
            summary = run_eval(settings)
            times[w] = time.perf_counter() - t0
            assert summary["n"] == (2 if w == 0 else n)
        print(f"runner, {n} questions, {latency:.2f}s/reply:")
        print(f"  1 worker:  {times[1]:.2f}s")
        print(f"  {workers} workers: {times[workers]:.2f}s")
        print(f"  speed-up:  {times[1] / times[workers]:.2f}x (ideal {workers}x)")


def bench_kuiper(n: int = 2000, n_boot: int = 1000) -> None:
    rng = np.random.default_rng(0)
    effort = rng.integers(1, 15, size=n).astype(float)
    correct = (rng.random(n) < 1 / (1 + np.exp((effort - 7) / 3))).astype(float)
    t0 = time.perf_counter()
    fast = kuiper_bootstrap(effort, correct, n_boot=n_boot, seed=1)
    t_fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    idx = np.random.default_rng(1).integers(0, n, size=(n_boot, n))
    values = [kuiper(effort[i], correct[i], permutations=0).normalized for i in idx]
    slow = tuple(np.quantile(values, [0.025, 0.975]))
    t_slow = time.perf_counter() - t0
    same = np.allclose(fast, slow)
    print(f"Kuiper K/N bootstrap, {n} questions x {n_boot} resamples:")
    print(f"  vectorised:   {t_fast:.3f}s  interval [{fast[0]:.4f}, {fast[1]:.4f}]")
    print(f"  per-resample: {t_slow:.3f}s  same interval: {same}")
    print(f"  speed-up:     {t_slow / t_fast:.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=24)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()
    bench_runner(args.questions, args.latency, args.workers)
    for n in (67, 2000):
        bench_kuiper(n)


if __name__ == "__main__":
    main()
