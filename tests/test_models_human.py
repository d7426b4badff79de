"""`--model human`: a person in the root seat (or answering `llm_query`), driven through a real
pseudo-terminal with pexpect (prompt_toolkit editor) and through plain stdin (pipes)."""

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rlm_docs.corpus import Corpus
from rlm_docs.errors import ConfigError, ModelError
from rlm_docs.models import make_client, parse_spec
from rlm_docs.models.human import HumanClient
from rlm_docs.tokens import count_message_tokens

pexpect = pytest.importorskip("pexpect", reason="pexpect (dev extra) is not installed")

PAGES = {
    "3M_2018_10K": ["cover page", "Capital expenditure was $1,577 million in 2018."],
    "AMD_2019_10K": ["AMD revenue was $6.73 billion in 2019."],
}
CLI = [sys.executable, "-m", "rlm_docs"]
SEND_HINT = "send it with a line holding only '.'"


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    return Corpus.from_documents(PAGES).save(tmp_path_factory.mktemp("human") / "store")


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        RLM_DOCS_HOME=str(tmp_path / "home"),
        PROMPT_TOOLKIT_NO_CPR="1",  # pexpect does not answer cursor-position queries
        TERM="xterm",
        RLM_DOCS_CACHE="off",
    )
    env.pop("RLM_DOCS_MODEL", None)
    env.pop("RLM_DOCS_SUB_MODEL", None)
    return env


def _type(child, lines: list[str]) -> None:
    for line in lines:
        child.send(line + "\r")


def test_spec_names_a_person():
    assert str(parse_spec("human")) == "human"
    assert parse_spec("human:alice").model == "alice"
    client = make_client("human:alice")
    assert (client.backend, client.model, client.spec) == ("human", "alice", "human:alice")
    with pytest.raises(ConfigError, match="no base URL"):
        parse_spec("human:alice@http://127.0.0.1:1/v1")


def test_requests_are_shown_without_terminal_controls_and_accounted_like_a_model():
    shown = io.StringIO()
    client = HumanClient("bob", reader=lambda: "first line\nsecond line", out=shown)
    messages = [{"role": "user", "content": "page text\x1b]0;pwned\x07 with \x1b[2Jescapes"}]
    reply = client.complete(messages, max_tokens=2)
    assert "\x1b" not in shown.getvalue() and "page text with escapes" in shown.getvalue()
    assert reply.text == "first line" and reply.usage.output_tokens == 2  # cut like a model
    assert reply.cost_usd == 0.0 and reply.usage.input_tokens == count_message_tokens(messages)
    assert "reply cut to the budget's 2 output tokens" in shown.getvalue()
    closed = HumanClient(reader=lambda: None, out=io.StringIO())
    with pytest.raises(ModelError, match="input was closed"):
        closed.complete(messages)


def test_person_in_the_root_seat_through_a_terminal(store, tmp_path):
    logs = tmp_path / "logs"
    child = pexpect.spawn(
        CLI[0],
        [*CLI[1:], "ask", "What was 3M's capital expenditure in 2018?", "--model", "human"]
        + ["--corpus", str(store), "--log-dir", str(logs), "--json"],
        env=_env(tmp_path),
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 200),
    )
    child.expect("==== system prompt ====")
    child.expect(SEND_HINT)
    # turn 1: a multi-line reply (a fenced code block), sent by a line holding only "."
    _type(child, ["```repl", "hits = search('capital expenditure')", "print(hits[0]['page'])"])
    _type(child, ["```", "."])
    child.expect(r"\[Turn 2 of 20\]")
    child.expect(r"Output:\s+2\s")
    child.expect(SEND_HINT)
    assert "==== system prompt ====" not in child.before  # shown once per conversation
    # turn 2: cite and finish, sent with Ctrl-D instead of "."
    _type(child, ["```repl", "cite('3M_2018_10K', 2)", "```", "FINAL($1,577 million)"])
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    out = child.before
    pred = json.loads(out[out.index("{") : out.rindex("}") + 1])
    assert pred["answer"] == ["$1,577 million"]
    assert pred["citations"] == [{"file": "3M_2018_10K", "page": 2}]
    assert pred["steps"] == 2 and pred["cost_usd"] == 0.0 and pred["input_tokens"] > 0
    records = [json.loads(line) for line in Path(pred["trajectory"]).read_text().splitlines()]
    turns = [r for r in records if r.get("type") == "iteration"]
    assert "hits = search('capital expenditure')" in turns[0]["response"]
    assert turns[1]["final_answer"] == "$1,577 million"
    assert (records[0]["root_model"], records[0]["backend"]) == ("human", "human")


def test_human_sub_model_answers_llm_query(store, tmp_path):
    script = tmp_path / "root.json"
    script.write_text(
        json.dumps(
            [
                "```repl\nr = llm_query('Is 1,577 a number? Answer yes or no.')\nprint(r)\n```",
                "FINAL_VAR(r)",
            ]
        )
    )
    child = pexpect.spawn(
        CLI[0],
        [*CLI[1:], "ask", "Is it a number?", "--model", f"scripted:{script}"]
        + ["--sub-model", "human", "--corpus", str(store), "--log-dir", str(tmp_path), "--json"],
        env=_env(tmp_path),
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 200),
    )
    child.expect(r"==== request \(sub-call or extraction\)")
    child.expect("Is 1,577 a number")
    child.expect(SEND_HINT)
    _type(child, ["yes, it is", "."])
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    out = child.before
    pred = json.loads(out[out.index("{") : out.rindex("}") + 1])
    assert pred["answer"] == ["yes, it is"] and pred["sub_calls"] == 1


def test_eval_baseline_with_a_person_on_plain_stdin(store, tmp_path):
    dataset = tmp_path / "q.jsonl"
    dataset.write_text(
        json.dumps(
            {
                "id": "q1",
                "question": "What was AMD's revenue in 2019?",
                "answer_variants": [["$6.73 billion"]],
                "evidence": [{"document": "AMD_2019_10K", "page": 1}],
            }
        )
        + "\n"
    )
    reply = "```repl\ncite('AMD_2019_10K', 1)\n```\nFINAL($6.73 billion)\n.\n"
    run = subprocess.run(
        [*CLI, "eval", "--dataset", str(dataset), "--corpus", str(store), "--system", "rlm"]
        + ["--model", "human:alice", "--out", str(tmp_path / "run"), "--workers", "4"],
        input=reply,
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert "==== system prompt ====" in run.stderr and "What was AMD's revenue" in run.stderr
    record = json.loads((tmp_path / "run" / "results.jsonl").read_text().splitlines()[0])
    assert record["answer"] == ["$6.73 billion"] and record["score"] == 1.0
    [entry] = record["ledger"]
    assert (entry["backend"], entry["model"], entry["role"]) == ("human", "alice", "root")
    assert entry["cost_usd"] == 0.0 and entry["latency_s"] > 0 and entry["input_tokens"] > 0


def test_budgets_bind_a_person_like_a_model(store, tmp_path):
    replies = "```repl\nprint(len(files()))\n```\n.\nFINAL(two documents)\n.\n"
    run = subprocess.run(
        [*CLI, "ask", "How many documents?", "--model", "human", "--corpus", str(store)]
        + ["--max-steps", "1", "--log-dir", str(tmp_path), "--json"],
        input=replies,
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    pred = json.loads(run.stdout)
    assert pred["stop_reason"] == "forced" and pred["steps"] == 2
    assert pred["answer"] == ["two documents"]
    assert re.search(r"[Oo]utput:\s+2\n", run.stderr) and "budget is exhausted" in run.stderr


def test_closed_input_ends_the_run_as_an_error(store, tmp_path):
    run = subprocess.run(
        [*CLI, "ask", "Anything?", "--model", "human", "--corpus", str(store)]
        + ["--log-dir", str(tmp_path), "--json"],
        input="",
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        timeout=120,
    )
    assert run.returncode == 1
    assert json.loads(run.stdout)["stop_reason"] == "error"
    assert "input was closed" in run.stderr or "input was closed" in run.stdout


def test_notebook_rlm_ask_with_a_person_answers_through_input_requests(store, tmp_path):
    manager = pytest.importorskip("jupyter_client.manager", reason="jupyter_client not installed")
    km, kc = manager.start_new_kernel(kernel_name="python3", env=_env(tmp_path))
    typed = iter(["```repl", "cite('AMD_2019_10K', 1)", "```", "FINAL($6.73 billion)", "."])
    prompts: list[str] = []
    shown: list[str] = []

    def answer(msg: dict) -> None:
        prompts.append(msg["content"]["prompt"])
        kc.input(next(typed))

    def output(msg: dict) -> None:
        if msg["msg_type"] == "stream":
            shown.append(msg["content"]["text"])

    try:
        code = (
            f"%load_ext rlm_docs\n%rlm_corpus {store}\n"
            "%rlm_ask --model human What was AMD's revenue in 2019?\n"
            "print('ANSWER', _rlm_prediction.answer, _rlm_prediction.citations)"
        )
        reply = kc.execute_interactive(
            code, allow_stdin=True, stdin_hook=answer, output_hook=output, timeout=120
        )
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert reply["content"]["status"] == "ok", reply["content"]
    assert len(prompts) == 5  # one input box per typed line, up to the sending "."
    text = "".join(shown)
    assert "==== system prompt ====" in text
    assert "ANSWER ['$6.73 billion'] [{'file': 'AMD_2019_10K', 'page': 1}]" in text
