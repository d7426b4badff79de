"""`--system agent`: an outside program per question, its calls metered by the proxy in front of
a real loopback chat server, so eval, its effort fields and the report cover it like any system."""

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("uvicorn", reason="the 'serve' extra (fastapi, uvicorn) is not installed")

from rlm_docs.cli import main  # noqa: E402
from rlm_docs.engine.trajectory import load_trajectory  # noqa: E402
from tests.fixtures.eval.support import ANSWERS, QUESTIONS, build_store, server_env  # noqa: E402
from tests.fixtures.rlms_model import rlms_model  # noqa: E402
from tests.servers.chat import ChatServer  # noqa: E402

pytestmark = pytest.mark.usefixtures(server_env.__name__)  # test key, private home, no cache

AGENT = """
import os, sys
import openai
question = sys.stdin.read()
with open(os.environ["KEY_SEEN"], "a") as f:
    f.write(os.environ["OPENAI_API_KEY"] + "\\n")
root = openai.OpenAI(max_retries=0)  # OPENAI_BASE_URL and the key come from the environment
sub = openai.OpenAI(base_url=os.environ["RLM_DOCS_AGENT_SUB_URL"], max_retries=0)
model = os.environ["RLM_DOCS_AGENT_MODEL"]
ask = lambda c, m, text: c.chat.completions.create(
    model=m, messages=[{"role": "user", "content": text}]).choices[0].message.content
plan = ask(root, model, "Plan: " + question)
check = ask(sub, os.environ["RLM_DOCS_AGENT_SUB_MODEL"], "Check: " + question)
try:
    print(ask(root, model, "Answer: " + question))
except openai.BadRequestError as refused:
    print("refused on", refused.body["axis"], file=sys.stderr)
    print(plan)
"""


def reply(messages: list[dict]) -> str:
    text = str(messages[-1]["content"])
    if "RLM Analysis Response:" in text:
        return rlms_model(messages)
    for question, (gold, (doc, page)) in ANSWERS.items():
        if question in text and text.startswith("Answer: "):
            return f"{gold[0]} [{doc} page {page}]"
    return "not sure yet"


def _eval(tmp_path: Path, server: ChatServer, out: str, *extra: str) -> int:
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    return main(
        [
            "eval", "--dataset", str(QUESTIONS), "--corpus", str(build_store(tmp_path / out / "s")),
            "--system", "agent", "--agent-command", f"{sys.executable} {agent}",
            "--model", f"openai:root@{server.base_url}", "--sub-model", f"openai:sub@{server.base_url}",
            "--out", str(tmp_path / out / "run"), "--limit", "2", "--no-progress", *extra,
        ]
    )  # fmt: skip


def _rows(run: Path) -> dict[str, dict]:
    lines = (run / "results.jsonl").read_text().splitlines()
    return {r["id"]: r for r in map(json.loads, lines)}


def test_agent_runs_per_question_through_the_proxy(tmp_path, monkeypatch):
    monkeypatch.setenv("KEY_SEEN", str(tmp_path / "keys.txt"))
    with ChatServer(reply=reply) as server:
        assert _eval(tmp_path, server, "a") == 0
        served = server.served_usage()
    rows = _rows(tmp_path / "a" / "run")
    assert rows["q1"]["answer"] == ["$4.2 billion"]
    assert rows["q1"]["citations"] == [{"file": "acme_2022_10k", "page": 2}]
    assert all(
        (r["steps"], r["sub_calls"], r["stop_reason"]) == (2, 1, "final") for r in rows.values()
    )
    assert sum(r["input_tokens"] for r in rows.values()) == served["prompt_tokens"]
    # the host's key never reached the agent: every call had to go through the proxy
    assert set((tmp_path / "keys.txt").read_text().split()) == {"rlm-docs-proxy"}
    traj = load_trajectory(rows["q1"]["trajectory"])
    assert [it.response for it in traj.iterations] == [
        "not sure yet",
        "$4.2 billion [acme_2022_10k page 2]",
    ]
    assert traj.iterations[1].prompt == [
        {"role": "user", "content": "Answer: What was Acme revenue for fiscal 2022?"}
    ]
    assert traj.result.extra["decomposition"]["sub_calls"] == 1
    assert main(["report", str(tmp_path / "a" / "run"), "--out", str(tmp_path / "report")]) == 0


def test_the_step_budget_refuses_the_agents_call_and_is_recorded(tmp_path, monkeypatch):
    monkeypatch.setenv("KEY_SEEN", str(tmp_path / "keys.txt"))
    with ChatServer(reply=reply) as server:
        assert _eval(tmp_path, server, "b", "--max-steps", "1") == 0
        models = [r.body["model"] for r in server.requests]
    rows = _rows(tmp_path / "b" / "run")
    assert all(
        (r["stop_reason"], r["stop_axis"], r["steps"]) == ("budget", "steps", 1)
        for r in rows.values()
    )
    # per question: one root call, one sub-call, the extraction; the refused call never left
    assert sorted(models) == ["root"] * 4 + ["sub"] * 2


def test_agent_needs_a_command(tmp_path, capsys):
    code = main(
        [
            "eval", "--dataset", str(QUESTIONS), "--corpus", str(build_store(tmp_path / "s")),
            "--system", "agent", "--model", "offline", "--out", str(tmp_path / "run"), "--no-progress",
        ]
    )  # fmt: skip
    assert code == 2
    assert "--agent-command" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
