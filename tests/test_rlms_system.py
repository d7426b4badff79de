"""`--system rlms`: the official rlms package's loop over the rendered corpus, its code in the
rlm-docs sandbox, its calls through the metering proxy to a real loopback chat server, its
answer through MADQA's extraction step, its log as an rlm-docs trajectory."""

import json
from pathlib import Path

import pytest

pytest.importorskip("rlm", reason="the 'rlms' extra (the rlms package) is not installed")
pytest.importorskip("uvicorn", reason="the 'serve' extra (fastapi, uvicorn) is not installed")

from rlm_docs.cli import main  # noqa: E402
from rlm_docs.corpus import Corpus  # noqa: E402
from rlm_docs.engine.trajectory import load_trajectory  # noqa: E402
from rlm_docs.eval.dataset import load_questions  # noqa: E402
from rlm_docs.governor import Budget, Governor, Ledger  # noqa: E402
from rlm_docs.systems import SystemConfig, make_system  # noqa: E402
from tests.fixtures.eval.support import DOCS, QUESTIONS, build_store, server_env  # noqa: E402
from tests.fixtures.rlms_model import ROOT_MARK, rlms_model  # noqa: E402
from tests.servers.chat import ChatServer  # noqa: E402

Q1 = load_questions(QUESTIONS)[0]
pytestmark = pytest.mark.usefixtures(server_env.__name__)  # test key, private home, no cache


def _answer(server: ChatServer, tmp_path: Path, budget: Budget | None = None):
    config = SystemConfig(
        corpus=Corpus.from_documents(DOCS),
        model=f"openai:root@{server.base_url}",
        sub_model=f"openai:sub@{server.base_url}",
        budget=budget or Budget(),
        log_dir=str(tmp_path),
        ledger=Ledger(),
    )
    system = make_system("rlms", config)
    governor = Governor(config.budget, ledger=config.ledger, question_id=Q1.id)
    return system.answer(Q1, governor), config.ledger


def test_rlms_answers_through_sandbox_proxy_and_extraction(tmp_path):
    with ChatServer(reply=rlms_model) as server:
        pred, ledger = _answer(server, tmp_path)
        served = server.served_usage()
        models = [r.body["model"] for r in server.requests]
    assert pred.answer == ["$4.2 billion"]
    assert pred.citations == [{"file": "acme_2022_10k", "page": 2}]
    assert (pred.stop_reason, pred.steps, pred.sub_calls) == ("final", 2, 1)
    assert [e.role for e in ledger.entries] == ["root", "sub", "root", "extract"]
    assert models == ["root", "sub", "root", "root"]
    assert pred.input_tokens == served["prompt_tokens"]
    assert pred.output_tokens == served["completion_tokens"]
    traj = load_trajectory(pred.trajectory)
    assert traj.metadata.system == "rlms"
    assert traj.metadata.environment_type == "rlm-docs-sandbox"
    assert traj.metadata.max_iterations == Budget().max_steps
    assert traj.iterations[0].prompt[0]["content"].startswith(ROOT_MARK)
    first = traj.iterations[0].code_blocks[0].result
    assert first.stdout.startswith("acme_2022_10k 2 Results of operations.")
    assert [c.root_model for c in first.sub_calls] == ["sub"]
    roots = [e for e in ledger.entries if e.role == "root"]
    assert [it.usage.input_tokens for it in traj.iterations] == [e.input_tokens for e in roots]
    assert traj.result.extraction == "extract"
    assert traj.result.answer == ["$4.2 billion"]


def test_a_refused_root_call_ends_the_run_as_a_budget_stop(tmp_path):
    with ChatServer(reply=rlms_model) as server:
        first_turn = Budget(max_input_tokens=1500)  # the first root call fits, the second not
        pred, ledger = _answer(server, tmp_path, first_turn)
        prompts = [r.body["messages"] for r in server.requests]
    assert (pred.stop_reason, pred.stop_axis) == ("budget", "input_tokens")
    assert [e.role for e in ledger.entries] == ["root", "sub"]
    assert len(prompts) == 2  # the refused turn and the extraction never reached the server
    assert pred.input_tokens <= 1500
    traj = load_trajectory(pred.trajectory)
    assert len(traj.iterations) == 1


def test_rlms_turn_limit_then_its_default_answer_is_a_forced_stop(tmp_path):
    with ChatServer(reply=rlms_model) as server:
        pred, ledger = _answer(server, tmp_path, Budget(max_steps=1))
    assert (pred.stop_reason, pred.stop_axis, pred.steps) == ("forced", "steps", 2)
    assert [e.role for e in ledger.entries][:3] == ["root", "sub", "root"]
    traj = load_trajectory(pred.trajectory)
    assert traj.metadata.max_iterations == 1
    assert traj.iterations[-1].response == "No answer was submitted in time."


def test_eval_cli_runs_rlms_end_to_end(tmp_path):
    store = build_store(tmp_path / "store")
    with ChatServer(reply=rlms_model) as server:
        code = main(
            [
                "eval", "--dataset", str(QUESTIONS), "--corpus", str(store),
                "--system", "rlms", "--model", f"openai:root@{server.base_url}",
                "--sub-model", f"openai:sub@{server.base_url}",
                "--out", str(tmp_path / "run"), "--limit", "2", "--workers", "2", "--no-progress",
            ]
        )  # fmt: skip
        served = server.served_usage()
    assert code == 0
    rows = [json.loads(x) for x in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in rows) == ["q1", "q2"]
    assert all(r["stop_reason"] == "final" for r in rows)
    assert sum(r["input_tokens"] for r in rows) == served["prompt_tokens"]
    by_id = {r["id"]: r for r in rows}
    assert by_id["q2"]["answer"] == ["Springfield, Oregon"]
    record = load_trajectory(by_id["q1"]["trajectory"]).result.extra["decomposition"]
    assert record["sub_calls"] == 1 and record["cells"] == 2
    assert "context-slicing" not in record["strategies"]  # it used regexes, not slices
    assert main(["report", str(tmp_path / "run"), "--out", str(tmp_path / "report")]) == 0


def test_offline_takes_rlms_seat_and_a_person_is_refused(tmp_path, capsys):
    store = build_store(tmp_path / "store")
    args = ["eval", "--dataset", str(QUESTIONS), "--corpus", str(store), "--system", "rlms"]
    assert main([*args, "--model", "offline", "--out", str(tmp_path / "run"), "--no-progress"]) == 0
    rows = [json.loads(x) for x in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    by_id = {r["id"]: r for r in rows}
    # the context-only offline policy, through rlms' loop: one turn, its sub-calls, its JSON
    assert by_id["q5"]["answer"] == ["12,500"]
    assert by_id["q5"]["citations"] == [{"file": "globex_2021_10k", "page": 3}]
    assert all((r["steps"], r["stop_reason"]) == (1, "final") for r in rows)
    assert all(r["sub_calls"] >= 1 for r in rows)
    capsys.readouterr()
    code = main([*args, "--model", "human", "--out", str(tmp_path / "run2"), "--no-progress"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert "cannot take rlms' seat" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "run2").exists()
