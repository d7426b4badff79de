"""Fan-out benchmark: `llm_query_batched`-style sub-calls through Governor + CachedClient.

1. 64 calls, 200 ms injected server latency, concurrency 16, all cache misses: wall time vs the
   ideal 64/16 x 0.2 s = 0.8 s (target ratio <= 1.2).
2. Per-call overhead against a zero-latency server, sequential: raw HTTP POST (http.client, keep-alive)
   vs the OpenAI backend alone vs Governor + CachedClient (miss, then hit). Overhead of
   client + governor + cache lookup = full path minus raw HTTP.

Run: `/work/venv/bin/python benchmarks/bench_fanout.py` (no network, no key needed).
"""

import http.client
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rlm_docs.governor import Budget, Governor  # noqa: E402
from rlm_docs.models import ResponseCache, make_client  # noqa: E402
from tests.servers.chat import ChatServer  # noqa: E402

CALLS, LATENCY_S, CONCURRENCY = 64, 0.2, 16
OVERHEAD_CALLS = 200


def prompt(i: int, tag: str) -> list[dict]:
    return [
        {"role": "system", "content": "Extract the figure asked for from the page."},
        {"role": "user", "content": f"[{tag} {i}] Page text ... What was total revenue?"},
    ]


def per_call(fn: Callable[[int], object], n: int) -> float:
    """Median seconds per call of `fn(i)` over n sequential calls (after warm-up)."""
    for i in range(5):
        fn(-1 - i)
    samples = []
    for i in range(n):
        t0 = time.perf_counter()
        fn(i)
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def fanout(tmp: Path) -> None:
    with ChatServer(reply=lambda m: "Revenue was $1.2B (page 4).", latency_s=LATENCY_S) as srv:
        client = make_client(
            f"openai:gpt-4o-mini@{srv.base_url}", cache=ResponseCache(tmp / "fanout.sqlite")
        )
        gov = Governor(Budget(max_sub_calls=None, max_concurrency=CONCURRENCY), question_id="b")
        client.complete(prompt(0, "warm"))  # load the SDK outside the timed region
        with ThreadPoolExecutor(CONCURRENCY) as pool:
            t0 = time.perf_counter()
            results = list(
                pool.map(lambda i: gov.call(client, prompt(i, "fan"), role="sub"), range(CALLS))
            )
            wall = time.perf_counter() - t0
    assert not any(r.cached for r in results), "fan-out must measure the cache-miss path"
    ideal = CALLS / CONCURRENCY * LATENCY_S
    print(f"fan-out: {CALLS} calls, {LATENCY_S * 1000:.0f} ms latency, concurrency {CONCURRENCY}")
    print(f"  wall time        {wall:.3f} s")
    print(f"  ideal            {ideal:.3f} s")
    print(f"  ratio            {wall / ideal:.2f}x  (target <= 1.20x)")
    print(
        f"  ledger calls     {gov.totals()['calls']}  input tokens {gov.totals()['input_tokens']}"
    )


def overhead(tmp: Path) -> None:
    with ChatServer(reply=lambda m: "Revenue was $1.2B (page 4).") as srv:
        raw = http.client.HTTPConnection("127.0.0.1", int(srv.url.rsplit(":", 1)[1]))

        def raw_post(i: int) -> object:
            body = {"model": "gpt-4o-mini", "messages": prompt(i, "raw"), "temperature": 0.0}
            headers = {"Authorization": "Bearer x", "Content-Type": "application/json"}
            raw.request("POST", "/v1/chat/completions", json.dumps(body), headers)
            return json.loads(raw.getresponse().read())

        bare = make_client(f"openai:gpt-4o-mini@{srv.base_url}", cache=False)
        cached = make_client(
            f"openai:gpt-4o-mini@{srv.base_url}", cache=ResponseCache(tmp / "overhead.sqlite")
        )
        gov = Governor(Budget(max_sub_calls=None, max_steps=None), question_id="o")
        t_raw = per_call(raw_post, OVERHEAD_CALLS)
        t_bare = per_call(lambda i: bare.complete(prompt(i, "bare")), OVERHEAD_CALLS)
        t_miss = per_call(lambda i: gov.call(cached, prompt(i, "full"), role="sub"), OVERHEAD_CALLS)
        t_hit = per_call(lambda i: gov.call(cached, prompt(i, "full"), role="sub"), OVERHEAD_CALLS)
    ms = 1000
    print(f"per-call overhead (median of {OVERHEAD_CALLS}, zero-latency server):")
    print(f"  raw HTTP POST                      {t_raw * ms:.2f} ms")
    print(f"  OpenAI backend (SDK + accounting)  {t_bare * ms:.2f} ms")
    print(f"  Governor + CachedClient, miss      {t_miss * ms:.2f} ms")
    print(f"  Governor + CachedClient, hit       {t_hit * ms:.2f} ms")
    print(f"  overhead client+governor+cache     {(t_miss - t_raw) * ms:.2f} ms/call")
    print(f"    of which governor + cache        {(t_miss - t_bare) * ms:.2f} ms/call")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        fanout(Path(tmp))
        overhead(Path(tmp))


if __name__ == "__main__":
    main()
