"""Hostile model code and files against the host: host CPU, peak RSS, trajectory size, spend.

Each case, at the size the security review used, runs in its own child process so
its peak RSS is its own (`ru_maxrss`, including the imports every case pays, shown as `base`).
Host CPU is the child's own user+system time for the case (the sandbox worker's CPU is not
the host's). Targets: every case under 2 s of host CPU and 200 MB RSS, spend never above budget.

Cases:
- `final-answer`: a final answer of backticks and 150,000 newlines (and 1.5 MB) through the
  answer parsers (`parse_answer`, `heuristic_answer`).
- `citation-word`: the heuristic citation pattern on one 40,000-character word (and 1 MB).
- `batch-1M`: `llm_query_batched([''] * 1000000)` with two sub-calls left, through the engine.
- `prompts-8x10MB`: eight 10 MB `llm_query` prompts after the wall budget ran out (over the
  8 MB host-call limit), and eight 3 MB ones (over the 2M-character prompt cap).
- `rlm-query-200`: 200 `rlm_query` in a loop under Budget(max_steps=2, max_sub_calls=1,
  max_wall_s=1); `rlm-query-100-$`: 100 under Budget(max_cost_usd=0.01), priced model.
- `deep-answer`: `answer` set to a 60-deep nested list; `huge-error`: a 55 MB `model=` string.
- `ocr-index`: OCR JSON with `"index": 3000000000`; `ocr-tables`: 40 nested table links (2 KB).
- `sanitize-1MB`: the terminal sanitizer on 1 MB of escape sequences.
- `never-answers`: `ask --max-wall 5` against a chat server that never answers (wall seconds).
- `mcp-grep-redos`: the MCP server's `grep` (`make_helpers(host=True)`) with `(\\w+\\s?)*\u0000`
  over a 4.4M-character corpus; `mcp-grep-flood`: `grep("word", context=100000,
  max_hits=10**9)` over it (took a server from 172 MB to 2.48 GB before the caps).
- `question-60k`: the offline model's question parsers on 60,000-character hostile questions
  (a word, `fy` repeated, `defined as` repeated; 46 s for `asked_decimals` alone before).
- `serve-bodies`: `serve`'s request checks on a 100,000-deep body, a 5,000-digit integer and
  NaN / 1e999 budgets.
- `slowloris-320`: `serve` under a 256-file limit, 320 half-open connections, then an
  authenticated request (its wall time, the server's log size, the server's own CPU and RSS
  including its start).
- `decompose-deep`: cells `x = context[1+1+...2000 terms:5]` and `"not " * 100000` through the
  engine and the decomposition record (counted in `cells_unanalysed`, never raised).
- `final-var-200M`: `FINAL_VAR` of a 200,000,000-character string (cut in the worker).
- `rlm-query-3x100M`: three `rlm_query` children answering 100,000,000 characters each.
- `pdf-shared-10x5M`: a ~20 KB PDF whose 10 pages share one 5,000,000-character stream.
- `store-bomb-200M`: `Corpus.load` of a pages.parquet holding one 200,000,000-character page
  (written by a separate process, outside the figures; the file grows ~1 byte per 30,000
  characters, so the review's 1e9-character page fits in ~32 KB).
- `cite-20k`: 20,000 distinct `cite()` calls on a 20,000-page corpus, then the citation check.
- `spaces-1.2M`: token count of a page of 1,200,000 spaces.
- `view-deep`: `view` of a trajectory whose child runs nest 10,000 deep (a 4 MB line).

Run: `python benchmarks/bench_hostile.py [--case NAME]` (RLM_DOCS_HOME is used for the sandbox
fork server cache). Figures measured on a loaded machine are noisy: CPU times are the stable part.
"""

import argparse
import contextlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DOCS = {"memo": ["The widget budget for 2024 was $12 million.", "Nothing else of note."]}


def repl(code: str) -> str:
    return f"```repl\n{code}\n```"


def store(tmp: Path) -> Path:
    from rlm_docs.corpus import Corpus

    return Corpus.from_documents(DOCS).save(tmp / "store")


def run_engine(replies: list, budget: Any, tmp: Path, model: str = "scripted") -> dict:
    """One question through the real engine and sandbox; the warm-up (fork server start) is not
    counted, since it is the same for every run."""
    from rlm_docs.engine import RLM
    from rlm_docs.models import ScriptedClient

    path = store(tmp)
    RLM(path, model=ScriptedClient(["FINAL(x)", "{}"])).ask("warm up?")
    root = ScriptedClient(replies, model=model)
    rlm = RLM(path, model=root, sub_model=ScriptedClient([lambda m: "ok"] * 100, model=model))
    rlm.budget, rlm.log_dir = budget, tmp / "runs"
    cpu = time.process_time()
    pred = rlm.ask("How much was the widget budget?")
    return {
        "cpu_s": time.process_time() - cpu,
        "trajectory_kb": Path(pred.trajectory).stat().st_size / 1024,
        "spent": pred.cost_usd,
        "budget": budget.max_cost_usd,
        "root_calls": sum(e.role == "root" for e in rlm.ledger.entries),
        "stop": pred.stop_reason,
    }


def timed(fn: Any, *args: Any) -> dict:
    cpu = time.process_time()
    fn(*args)
    return {"cpu_s": time.process_time() - cpu}


def case_final_answer(tmp: Path) -> dict:
    from rlm_docs.answer_parsing import heuristic_answer, parse_answer

    def both(text: str) -> None:
        parse_answer(text)
        heuristic_answer(text)

    small = timed(both, "```" + "\n" * 150_000)
    big = timed(both, "```" + "\n" * 1_500_000)
    return {"cpu_s": small["cpu_s"], "note": f"1.5 MB: {big['cpu_s']:.2f} s"}


def case_citation_word(tmp: Path) -> dict:
    from rlm_docs.answer_parsing import cited_pages

    small = timed(cited_pages, "a" * 40_000)
    big = timed(cited_pages, "a" * 1_000_000)
    return {"cpu_s": small["cpu_s"], "note": f"1 MB: {big['cpu_s']:.2f} s"}


def case_batch(tmp: Path) -> dict:
    from rlm_docs.governor import Budget

    code = "llm_query('a')\ntry:\n    llm_query_batched([''] * 1000000)\nexcept BudgetExceeded:\n    pass"
    return run_engine([repl(code), "FINAL(x)", "{}"], Budget(max_sub_calls=3), tmp)


def case_prompts(tmp: Path) -> dict:
    from rlm_docs.governor import Budget

    def code(size: int, wait: str) -> str:
        return (
            f"import time\n{wait}\nbig = 'x' * {size}\nfor i in range(8):\n"
            "    try:\n        llm_query(big)\n    except Exception:\n        pass\n"
        )

    # 10 MB: over the 8 MB limit of one host call, refused in the worker.
    first = run_engine(
        [repl(code(10_000_000, "time.sleep(1.2)")), "FINAL(x)", "{}"], Budget(max_wall_s=1), tmp
    )
    # 3 MB: reaches the host, over the 2M-character prompt cap, refused before tokenizing.
    capped = run_engine([repl(code(3_000_000, "")), "FINAL(x)", "{}"], Budget(), tmp / "c")
    first["note"] = (
        f"3 MB prompts (host-side cap): {capped['cpu_s']:.2f} s CPU, "
        f"{capped['trajectory_kb']:.0f} KB trajectory"
    )
    return first


def spawning(n: int) -> Any:
    """Root replies: `n` `rlm_query` calls in a loop (refusals caught); children answer."""

    def reply(messages: list[dict]) -> str:
        if "sub question" in messages[0]["content"]:
            return "FINAL(child)"
        return repl(
            f"for i in range({n}):\n    try:\n        rlm_query('sub question')\n"
            "    except BudgetExceeded:\n        pass"
        )

    return reply


def case_rlm_query_200(tmp: Path) -> dict:
    from rlm_docs.governor import Budget

    budget = Budget(max_steps=2, max_sub_calls=1, max_wall_s=1)
    return run_engine([spawning(200)] * 1000, budget, tmp)


def case_rlm_query_100_dollars(tmp: Path) -> dict:
    from rlm_docs.governor import Budget

    return run_engine([spawning(100)] * 1000, Budget(max_cost_usd=0.01), tmp, model="gpt-5-mini")


def case_deep_answer(tmp: Path) -> dict:
    from rlm_docs.governor import Budget

    deep = "d = []\nfor _ in range(60):\n    d = [d]\nanswer['content'] = d\nanswer['ready'] = True"
    return run_engine([repl(deep), "FINAL(x)", "{}"], Budget(), tmp)


def case_huge_error(tmp: Path) -> dict:
    from rlm_docs.governor import Budget

    code = "try:\n    llm_query('hi', model='m' * 55000000)\nexcept PermissionError:\n    pass"
    return run_engine([repl(code), "FINAL(x)", "{}"], Budget(), tmp)


def _read_ocr(tmp: Path, data: dict) -> dict:
    from rlm_docs.errors import IngestError
    from rlm_docs.ingest import Options, read_source

    f = tmp / "ocr.json"
    f.write_text(json.dumps(data))
    cpu = time.process_time()
    try:
        pages = read_source(f, f.read_bytes(), "0" * 64, Options()).documents[0].pages
        note = f"{sum(map(len, pages)):,} characters of text"
    except IngestError as exc:
        note = str(exc).split(": ", 1)[1][:60]
    return {"cpu_s": time.process_time() - cpu, "note": f"{f.stat().st_size:,} B file; {note}"}


def case_ocr_index(tmp: Path) -> dict:
    return _read_ocr(tmp, {"pages": [{"index": 3_000_000_000, "markdown": "x"}]})


def case_ocr_tables(tmp: Path) -> dict:
    tables = [{"id": f"t{i}", "content": f"[t{i + 1}](t{i + 1}) " * 2} for i in range(40)]
    return _read_ocr(tmp, {"pages": [{"index": 0, "markdown": "[t0](t0)", "tables": tables}]})


def case_sanitize(tmp: Path) -> dict:
    from rlm_docs.terminal_text import sanitize

    return timed(sanitize, "\x1b]0;t\x07\x1b[2J\x9b1" * 100_000)


def case_never_answers(tmp: Path) -> dict:
    from rlm_docs.cli import main
    from tests.servers.chat import ChatServer

    os.environ["RLM_DOCS_CACHE"] = "off"
    path = store(tmp)
    with ChatServer(latency_s=3600) as srv:
        cpu, wall = time.process_time(), time.monotonic()
        args = ["ask", "q?", "--corpus", str(path), "--max-wall", "5", "--log-dir", str(tmp)]
        main([*args, "--model", f"openai:m@{srv.base_url}"])
        wall = time.monotonic() - wall
    return {"cpu_s": time.process_time() - cpu, "note": f"{wall:.1f} s wall for --max-wall 5"}


def _built_elsewhere(path: Path, documents: str) -> Path:
    """The store of `documents` (a Python expression) at `path`, built in another process so
    building it is not counted: a server loads its store, it does not build it."""
    build = (
        "from rlm_docs.corpus import Corpus; import sys\n"
        f"Corpus.from_documents({documents}).save(sys.argv[1])"
    )
    subprocess.run([sys.executable, "-c", build, str(path)], check=True)
    return path


def _words_corpus(tmp: Path) -> Any:
    """A 4.4M-character corpus: 220 pages of 1,000 lines of words."""
    from rlm_docs.corpus import Corpus

    pages = "{'words': ['\\n'.join(['word word word word'] * 1000)] * 220}"
    return Corpus.load(_built_elsewhere(tmp / "words", pages))


def case_mcp_grep_redos(tmp: Path) -> dict:
    from rlm_docs.repl.helpers import make_helpers

    grep = make_helpers(_words_corpus(tmp), host=True)["grep"]
    return timed(grep, r"(\w+\s?)*\u0000")


def case_mcp_grep_flood(tmp: Path) -> dict:
    from rlm_docs.repl.helpers import make_helpers

    grep = make_helpers(_words_corpus(tmp), host=True)["grep"]
    cpu = time.process_time()
    hits = grep("word", context=100_000, max_hits=10**9)
    chars = len(json.dumps(hits))
    return {"cpu_s": time.process_time() - cpu, "note": f"{len(hits)} hits, {chars:,} chars"}


def case_question_60k(tmp: Path) -> dict:
    from rlm_docs.offline.computation import computation
    from rlm_docs.offline.question import asked_decimals, asked_unit

    def parse() -> None:
        for text in ("a" * 60_000, "fy" * 30_000, "defined as " * 5_455):
            asked_decimals(text), asked_unit(text), computation(text)

    return timed(parse)


def case_serve_bodies(tmp: Path) -> dict:
    from rlm_docs.governor import Budget
    from rlm_docs.serve.caller_input import BadField, parse_json, request_budget

    def check() -> None:
        for body in ("[" * 100_000 + "]" * 100_000, '{"n": ' + "9" * 5000 + "}"):
            with contextlib.suppress(ValueError):
                parse_json(body)
        for value in ("NaN", "1e999"):
            with contextlib.suppress(BadField, ValueError):
                request_budget(Budget(), parse_json(f'{{"max_wall_s": {value}}}'))

    return timed(check)


def case_slowloris(tmp: Path) -> dict:
    import socket
    import urllib.request

    path = _built_elsewhere(tmp / "store", repr(DOCS))
    log = tmp / "serve.log"
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "rlm_docs", "serve", "--corpus", str(path), "--port", "0"]
        + ["--api-key-env", "BENCH_KEY", "--header-timeout", "2"],
        stderr=log.open("w"),
        env=dict(os.environ, BENCH_KEY="k", RLM_DOCS_CACHE="off"),
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard)),
    )
    while "listening on" not in log.read_text():
        time.sleep(0.05)
    url = log.read_text().split("listening on ")[1].split()[0]
    host, port = url.removeprefix("http://").split(":")
    held = []
    for _ in range(320):
        s = socket.create_connection((host, int(port)))
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
        held.append(s)
    wall = time.monotonic()
    ask = urllib.request.Request(url + "/v1/models", headers={"Authorization": "Bearer k"})
    status = urllib.request.urlopen(ask, timeout=30).status
    wall = time.monotonic() - wall
    time.sleep(3)
    for s in held:
        s.close()
    server.terminate()
    server.wait()
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "cpu_s": 0.0,
        "note": f"HTTP {status} in {wall:.2f} s; log {log.stat().st_size:,} bytes; server "
        f"{used.ru_utime + used.ru_stime:.2f} s CPU, {used.ru_maxrss / 1024:.0f} MB incl. start",
    }


def case_decompose_deep(tmp: Path) -> dict:
    from rlm_docs.corpus import Corpus
    from rlm_docs.eval.decomposition import decompose
    from rlm_docs.governor import Budget

    slice_code = "x = context[" + "+".join(["1"] * 2000) + ":5]"
    not_code = "x = " + "not " * 100_000 + "1"
    replies = [repl(slice_code), repl(not_code), "FINAL(x)", "{}"]
    figures = run_engine(replies, Budget(), tmp)
    from rlm_docs.engine.trajectory import load_trajectory

    traj = load_trajectory(next((tmp / "runs").glob("*.jsonl")))
    cpu = time.process_time()
    record = decompose(traj, [], Corpus.load(tmp / "store"))
    figures["cpu_s"] += time.process_time() - cpu
    figures["note"] = f"{record.cells_unanalysed} of {record.cells} cells unanalysed"
    return figures


def case_final_var(tmp: Path) -> dict:
    from rlm_docs.governor import Budget

    return run_engine([repl("big = 'x' * 200000000") + "\nFINAL_VAR(big)", "{}"], Budget(), tmp)


def case_rlm_query_children(tmp: Path) -> dict:
    from rlm_docs.governor import Budget

    def reply(messages: list[dict]) -> str:
        if "sub question" in messages[1]["content"]:
            return repl("big = 'y' * 100000000") + "\nFINAL_VAR(big)"
        if any(m["role"] == "assistant" for m in messages):
            return 'FINAL({"answer": ["x"], "citations": []})'
        return repl("\n".join(f"a{i} = rlm_query('sub question')" for i in range(3)))

    return run_engine([reply] * 20, Budget(), tmp)


def case_pdf_shared(tmp: Path) -> dict:
    from rlm_docs.errors import IngestError
    from rlm_docs.ingest import Options, read_source
    from tests.fixtures.ingest.pdf import shared_stream_pdf

    f = tmp / "bomb.pdf"
    f.write_bytes(shared_stream_pdf(10, 5_000_000))
    cpu = time.process_time()
    try:
        read_source(f, f.read_bytes(), "0" * 64, Options(ocr="local"))
        note = "read (not refused)"
    except IngestError as exc:
        note = str(exc).split(": ", 1)[1][:60]
    return {"cpu_s": time.process_time() - cpu, "note": f"{f.stat().st_size:,} B file; {note}"}


def case_store_bomb(tmp: Path) -> dict:
    from rlm_docs.corpus import Corpus
    from rlm_docs.corpus.store import PAGES
    from rlm_docs.errors import CorpusError

    path = store(tmp)
    make = (
        "import sys, pyarrow as pa, pyarrow.parquet as pq\n"
        "from rlm_docs.corpus.store import PAGES_SCHEMA\n"
        "n = 200_000_000\n"
        "cols = [pa.array([0], pa.int32()), pa.array([1], pa.int32()),"
        " pa.array(['a' * n], pa.large_string()), pa.array([n], pa.int32()),"
        " pa.array([1], pa.int32())]\n"
        "pq.write_table(pa.table(cols, schema=PAGES_SCHEMA), sys.argv[1], compression='zstd')\n"
    )
    subprocess.run([sys.executable, "-c", make, str(path / PAGES)], check=True)
    cpu = time.process_time()
    try:
        Corpus.load(path)
        note = "loaded (not refused)"
    except CorpusError as exc:
        note = str(exc).split(": ", 1)[1][:50]
    size = (path / PAGES).stat().st_size
    return {"cpu_s": time.process_time() - cpu, "note": f"{size:,} B pages.parquet; {note}"}


def case_cite(tmp: Path) -> dict:
    from rlm_docs.corpus import Corpus
    from rlm_docs.engine.citation_check import validate
    from rlm_docs.engine.host_functions import HostFunctions
    from rlm_docs.governor import Governor
    from rlm_docs.models import make_client

    corpus = Corpus.from_documents({"book": [f"page {i}" for i in range(20_000)]})
    host = HostFunctions(Governor(), make_client("offline"), corpus=corpus)
    cpu = time.process_time()
    for page in range(1, 20_001):
        host.cite("book", page)
    valid, _ = validate(corpus, host.cited + host.cited)
    return {"cpu_s": time.process_time() - cpu, "note": f"{len(valid):,} citations kept"}


def case_spaces(tmp: Path) -> dict:
    from rlm_docs.tokens import count_tokens

    return timed(count_tokens, "a" + " " * 1_200_000 + "b")


def case_view_deep(tmp: Path) -> dict:
    from rlm_docs.cli import main

    meta = json.dumps({"type": "metadata", "format": "rlm-docs.trajectory", "version": 2})
    turn = '{"type": "iteration", "iteration": 1, "prompt": [], "response": "r", "code_blocks": '
    call = '[{"code": "x", "result": {"stdout": "", "rlm_calls": [{"kind": "rlm_query", '
    head = turn + call + '"prompt": "p", "response": "a", "children": [' + meta + ", "
    tail = ', {"type": "result", "answer": "a"}]}]}}]}'
    log = tmp / "deep.jsonl"
    log.write_text(meta + "\n" + head * 10_000 + turn + "[]}" + tail * 10_000 + "\n")
    cpu = time.process_time()
    code = main(["view", str(log), "--out", str(tmp / "v.html")])
    return {"cpu_s": time.process_time() - cpu, "note": f"exit {code}"}


CASES = {
    "final-answer": case_final_answer,
    "citation-word": case_citation_word,
    "batch-1M": case_batch,
    "prompts-8x10MB": case_prompts,
    "rlm-query-200": case_rlm_query_200,
    "rlm-query-100-$": case_rlm_query_100_dollars,
    "deep-answer": case_deep_answer,
    "huge-error": case_huge_error,
    "ocr-index": case_ocr_index,
    "ocr-tables": case_ocr_tables,
    "sanitize-1MB": case_sanitize,
    "never-answers": case_never_answers,
    "mcp-grep-redos": case_mcp_grep_redos,
    "mcp-grep-flood": case_mcp_grep_flood,
    "question-60k": case_question_60k,
    "serve-bodies": case_serve_bodies,
    "slowloris-320": case_slowloris,
    "decompose-deep": case_decompose_deep,
    "final-var-200M": case_final_var,
    "rlm-query-3x100M": case_rlm_query_children,
    "pdf-shared-10x5M": case_pdf_shared,
    "store-bomb-200M": case_store_bomb,
    "cite-20k": case_cite,
    "spaces-1.2M": case_spaces,
    "view-deep": case_view_deep,
}


def child(name: str) -> None:
    """Run one case and print its figures as JSON (peak RSS in MB, base = after imports)."""
    import rlm_docs.engine.rlm  # noqa: F401  (imports every case pays, outside its figures)
    import rlm_docs.ingest.pipeline  # noqa: F401

    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    with tempfile.TemporaryDirectory(prefix="bench-hostile-") as tmp:
        figures = CASES[name](Path(tmp))
    figures["base_mb"] = base
    figures["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(figures))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=sorted(CASES), help="run only this case")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    print(f"{'case':<16} {'host CPU':>9} {'peak RSS':>9} {'base':>6} {'traj':>8}  spend / notes")
    for name in [args.case] if args.case else CASES:
        done = subprocess.run(
            [sys.executable, __file__, "--child", name], capture_output=True, text=True
        )
        lines = done.stdout.strip().splitlines()
        if done.returncode != 0 or not lines:
            print(f"{name:<16} failed: {done.stderr.strip().splitlines()[-1:]}")
            continue
        f = json.loads(lines[-1])
        traj = f"{f['trajectory_kb']:.0f} KB" if "trajectory_kb" in f else "-"
        extra = []
        if f.get("budget") is not None:
            extra.append(f"${f['spent']:.4f} of ${f['budget']:.2f}")
        if "root_calls" in f:
            extra.append(f"{f['root_calls']} root calls, stop {f['stop']}")
        if f.get("note"):
            extra.append(f["note"])
        print(
            f"{name:<16} {f['cpu_s']:>8.2f}s {f['rss_mb']:>7.0f}MB {f['base_mb']:>5.0f}M "
            f"{traj:>8}  {'; '.join(extra)}"
        )


if __name__ == "__main__":
    main()
