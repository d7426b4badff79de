"""Trajectory viewer at scale: build time, file size, and browser load / expand times.

Builds an eval-run directory of N questions whose trajectories have a realistic shape (6 root
turns, each with a code block printing ~3 KB, 4 `llm_query` sub-calls carrying a page of text,
and one nested `rlm_query` child run), using FinanceBench page text when `../shared` is present
and generated text otherwise. Then it times `load_source` + `build_html`, and, when chromium is
installed, the page load in headless chromium and the expansion of the largest question.

    python benchmarks/bench_viewer.py [--questions 300]
"""

import argparse
import json
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from rlm_docs.engine.records import CellResult, CodeBlock, Metadata, Result, SubCall, TurnUsage
from rlm_docs.engine.trajectory import TrajectoryWriter
from rlm_docs.viewer import build_html, load_source

FINANCEBENCH = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "financebench"


def page_texts() -> list[str]:
    files = sorted((FINANCEBENCH / "markdown").glob("*.pages.json"))[:3]
    pages = [p for f in files for p in json.loads(f.read_text()) if len(p) > 500]
    if pages:
        return pages
    rng = random.Random(0)
    words = [
        "revenue",
        "net",
        "income",
        "capital",
        "expenditure",
        "segment",
        "operating",
        "cash",
        "total",
    ]
    return [" ".join(rng.choice(words) for _ in range(400)) for _ in range(200)]


def turn(t: TrajectoryWriter, n: int, pages: list[str], rng: random.Random, child: bool) -> None:
    it = t.iteration([{"role": "user", "content": f"turn {n}: " + rng.choice(pages)[:800]}])
    it.response = f"```repl\nhits = search('term {n}')\nprint(hits)\n```"
    calls = []
    for _ in range(0 if child else 4):
        calls.append(
            SubCall(
                kind="llm_query",
                prompt="Question: ...\n" + rng.choice(pages)[:2000],
                root_model="openai:gpt-5-mini",
                response=rng.choice(pages)[:300],
                execution_time=0.8,
                cost_usd=0.0004,
                ledger={
                    "role": "sub",
                    "model": "gpt-5-mini",
                    "input_tokens": 600,
                    "output_tokens": 80,
                    "cost_usd": 0.0004,
                    "latency_s": 0.8,
                },
                depth=int(child),
            )
        )
    if not child and n == 1:
        kid = TrajectoryWriter(Metadata(root_model="openai:gpt-5-mini", question="child", depth=1))
        for k in (1, 2):
            turn(kid, k, pages, rng, child=True)
        kid.result(Result(answer=["child answer"], citations=[]))
        calls.append(
            SubCall(
                kind="rlm_query",
                prompt="child",
                response="child answer",
                execution_time=3.0,
                cost_usd=0.002,
                depth=0,
                child=kid.trajectory,
            )
        )
    it.code_blocks.append(
        CodeBlock(
            f"hits = search('term {n}')\nprint(hits)",
            CellResult(stdout=rng.choice(pages)[:3000], execution_time=0.01, sub_calls=calls),
        )
    )
    it.usage = TurnUsage(4000 * n, 300, 0.002)
    t.close(it)


def make_run(root: Path, n: int) -> Path:
    pages, rng = page_texts(), random.Random(1)
    (root / "trajectories").mkdir(parents=True)
    rows = []
    for i in range(n):
        qid = f"q{i:04d}"
        t = TrajectoryWriter(
            Metadata(root_model="openai:gpt-5-mini", question=f"Question {i}?", question_id=qid)
        )
        for k in range(1, 7):
            turn(t, k, pages, rng, child=False)
        record = {
            "id": qid,
            "question": f"Question {i}?",
            "answer": [f"{i} million"],
            "citations": [{"file": "DOC", "page": i % 90 + 1}],
            "steps": 6,
            "sub_calls": 26,
            "input_tokens": 90_000,
            "output_tokens": 3_000,
            "cost_usd": 0.03,
            "wall_s": 40.0,
            "correct": i % 3 != 0,
            "trajectory": f"trajectories/{qid}.jsonl",
        }
        t.result(Result.from_dict(record))
        t.write(root / record["trajectory"])
        rows.append(record)
    (root / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def browser_times(html: Path, n: int) -> dict[str, float] | None:
    chromium = shutil.which("chromium")
    if chromium is None:
        return None
    from playwright.sync_api import sync_playwright

    args = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=args)
        page = browser.new_page()
        t0 = time.perf_counter()
        page.goto(html.as_uri())
        page.wait_for_function(f"document.querySelectorAll('section.q').length === {n}")
        load = time.perf_counter() - t0
        expands = []
        for i in (0, n // 2, n - 1):
            head = page.locator("section.q .q-head").nth(i)
            t1 = time.perf_counter()
            head.click()
            page.locator("section.q").nth(i).locator(".citation").wait_for()
            expands.append(time.perf_counter() - t1)
        t2 = time.perf_counter()
        page.click("#expand-all")
        page.locator("section.q").nth(n - 1).locator("details.turn").first.wait_for()
        expand_all = time.perf_counter() - t2
        browser.close()
    return {
        "load_s": load,
        "expand_median_s": statistics.median(expands),
        "expand_all_s": expand_all,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=300)
    n = parser.parse_args().questions
    with tempfile.TemporaryDirectory() as tmp:
        run = make_run(Path(tmp) / "run", n)
        logs = sum(f.stat().st_size for f in (run / "trajectories").iterdir())
        t0 = time.perf_counter()
        data = load_source(run)
        t1 = time.perf_counter()
        page = build_html(data)
        t2 = time.perf_counter()
        html = Path(tmp) / "view.html"
        html.write_text(page, encoding="utf-8")
        size = html.stat().st_size
        print(f"questions                 {n}")
        print(f"trajectory logs           {logs / 1e6:8.1f} MB")
        print(f"load_source               {t1 - t0:8.2f} s")
        print(f"build_html                {t2 - t1:8.2f} s")
        print(f"HTML file                 {size / 1e6:8.1f} MB  ({size / logs:.2f} x the logs)")
        times = browser_times(html, n)
        if times is None:
            print("chromium not installed: browser timings skipped")
            return
        print(f"browser load to list      {times['load_s']:8.2f} s")
        print(f"expand one question       {times['expand_median_s'] * 1000:8.0f} ms (median of 3)")
        print(f"expand all questions      {times['expand_all_s']:8.2f} s")
        print(
            f"expand-all / one          {times['expand_all_s'] / times['expand_median_s']:8.0f} x"
        )


if __name__ == "__main__":
    main()
