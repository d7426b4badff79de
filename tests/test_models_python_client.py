"""`py:package.module:factory`: a client defined here (the offline policy behind a client of our
own, with its own backend name, price and judge replies) is the root, sub-model and judge of an
`eval`, a sweep's model and `serve`'s model; bad factories are one-line errors, exit 2."""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from rlm_docs.cli import main
from rlm_docs.errors import ConfigError
from rlm_docs.models import Completion, Price, Usage, make_client, parse_spec
from rlm_docs.offline import reply
from rlm_docs.tokens import count_message_tokens, count_tokens
from tests.fixtures.eval.support import QUESTIONS, build_store

ROOT = Path(__file__).resolve().parents[1]
SPEC = f"py:{__name__}:ours"
PRICE = Price(input=1.0, output=2.0, cached_input=0.5, context_window=200_000)


class Ours:
    """A client of our own: the offline policy, priced, and a judge that says correct."""

    spec = SPEC
    backend = "ours"
    model = "ours-1"
    price = PRICE

    def complete(self, messages, *, temperature=0.0, max_tokens=None, **params):
        start = time.perf_counter()
        prompt = str(messages[0]["content"])
        text = "JUDGMENT: correct" if "JUDGMENT" in prompt else reply(messages)
        usage = Usage(count_message_tokens(messages), count_tokens(text), 0)
        return Completion(
            text=text,
            usage=usage,
            model=self.model,
            latency_s=time.perf_counter() - start,
            cost_usd=PRICE.cost(usage),
            usage_source="tiktoken",
        )


def ours() -> Ours:
    return Ours()


def not_a_client() -> dict:
    return {"spec": "x"}


def test_the_spec_names_a_factory_and_bad_ones_are_refused():
    assert parse_spec(SPEC).backend == "py" and str(parse_spec(SPEC)) == SPEC
    assert isinstance(make_client(SPEC), Ours)
    for spec, why in (
        ("py:tests", "expected py:package.module:factory"),
        ("py:no_such_module_here:f", "cannot import no_such_module_here"),
        (f"py:{__name__}:missing", "has no function missing"),
        (f"py:{__name__}:not_a_client", "not_a_client() returned dict, not a Client"),
    ):
        with pytest.raises(ConfigError, match=re.escape(why)):
            make_client(spec)


def test_eval_runs_with_our_client_as_root_sub_model_and_judge(home, capsys):
    store = build_store(home / "store")
    out = home / "run"
    argv = [
        "eval", "--dataset", str(QUESTIONS), "--corpus", str(store), "--system", "rlm",
        "--model", SPEC, "--sub-model", SPEC, "--judge", SPEC, "--out", str(out),
        "--no-progress", "--max-cost", "1",
    ]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    calls = [c for r in rows for c in r["ledger"]]
    assert {c["backend"] for c in calls} == {"ours"} and {c["model"] for c in calls} == {"ours-1"}
    assert {"root", "judge"} <= {c["role"] for c in calls}
    assert sum(c["cost_usd"] for c in calls) > 0  # priced by the client's own price
    assert json.loads((out / "run.json").read_text())["judge"] == SPEC

    bad = [*argv[:-5], "--model", "py:no_such_module_here:f", "--out", str(home / "bad")]
    assert main(bad) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot import no_such_module_here" in err
    assert not (home / "bad").exists()


def test_a_sweep_takes_our_client(home, capsys):
    spec = home / "sweep.toml"
    spec.write_text(
        f"""
[grid]
system = "static-rag"
model = "{SPEC}"
[[data]]
name = "d"
dataset = "{QUESTIONS}"
corpus = "{build_store(home / "store")}"
limit = 2
""",
        encoding="utf-8",
    )
    assert main(["sweep", str(spec), "--out", str(home / "sweep"), "--no-progress"]) == 0
    rows = (home / "sweep" / "d" / "results.jsonl").read_text().splitlines()
    assert [c["backend"] for r in rows for c in json.loads(r)["ledger"]] == ["ours", "ours"]


def test_serve_answers_with_our_client(home):
    store = build_store(home / "store")
    log = home / "serve.log"
    env = os.environ | {"RLM_DOCS_HOME": str(home / "home"), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "rlm_docs", "serve", "--port", "0", "--corpus", str(store),
         "--model", SPEC],
        stdout=subprocess.DEVNULL, stderr=log.open("w"), env=env, cwd=ROOT,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not (found := re.search(r"listening on (http://\S+)", log.read_text())):
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        question = "Which Initech executive will retire?"
        resp = httpx.post(
            found.group(1) + "/v1/chat/completions",
            json={"model": "rlm-docs", "messages": [{"role": "user", "content": question}]},
            timeout=120,
        )
    finally:
        proc.terminate()
        proc.wait(30)
    assert resp.status_code == 200, resp.text
    extra = resp.json()["rlm_docs"]
    assert extra["stop_reason"] == "final" and extra["answer"]
