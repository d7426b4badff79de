"""`rlm-docs rescore`: an old run (answers with `Caveat:` items, prose golds) scored again with
the current scorer, with and without a judge served on 127.0.0.1; resume after SIGKILL."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rlm_docs.cli import main
from rlm_docs.eval.report import build_report
from rlm_docs.eval.rescoring import PROGRESS_FILE
from rlm_docs.eval.rundir import FORMAT, load_run
from tests.servers.chat import ChatServer

REPO = Path(__file__).resolve().parents[1]
ADOBE = (
    "No the operating margins of Adobe have recently declined from 36.8% in FY 2021 to 34.6% "
    "in FY2022. A drop by 2.2% in a year."
)
# (id, gold variants, answer list as runs before the answer record stored it)
OLD_ROWS = [
    (
        "lincoln",
        [["Not answerable"]],
        ["Not answerable", "Caveat: the corpus has no survey about Lincoln; no figure given"],
    ),
    (
        "ratio",
        [["0.627"]],
        [
            "0.627",
            "Gross profit $9,912 million / total assets $15,803 million (FY ended January 28, "
            "2023)",
            "Caveat: using average total assets ... gives 0.595",
        ],
    ),
    (
        "working_capital",
        [["$5818.00"]],
        [
            "$5,818 million (total current assets $19,815M less total current liabilities "
            "$13,997M at December 31, 2021)"
        ],
    ),
    (
        "capex",
        [["$1577.00"]],
        ["$1,577 million (purchases of property, plant and equipment (PP&E), FY2018)"],
    ),
    ("adobe", [[ADOBE]], ["No", "Operating margin fell from 36.8% (FY2021) to 34.6% (FY2022)"]),
]
VERDICT = "Step 1: no refusal. Step 2: same meaning.\nJUDGMENT: correct\nMAIN_ISSUE: none\n"
VERDICT += "EXPLANATION: the answer states the decline the gold describes"


def _record(qid: str, gold: list[list[str]], answer: list[str]) -> dict:
    return {
        "id": qid,
        "question": f"Question {qid}?",
        "answer": answer,
        "citations": [],
        "steps": 3,
        "sub_calls": 0,
        "input_tokens": 100,
        "output_tokens": 10,
        "cost_usd": 0.01,
        "wall_s": 1.0,
        "max_depth": 0,
        "stop_reason": "final",
        "stop_axis": None,
        "anls": 0.0,
        "score": 0.0,
        "stage": "anls",
        "correct": False,
        "answer_variants": gold,
        "evidence": [],
        "status": "ok",
        "fields": {},
        "ledger": [{"role": "root", "model": "m", "cost_usd": 0.01, "question_id": qid}],
    }


def old_run(path: Path, rows=OLD_ROWS) -> Path:
    """A run directory as rlm-docs wrote it before the answer record (scoring version 2)."""
    path.mkdir(parents=True)
    manifest = {
        "format": FORMAT,
        "version": 1,
        "scoring_version": 2,
        "system": "rlm",
        "model": "openai:m",
        "judge": None,
        "judge_sensitivity": 0.98,
        "judge_specificity": 1.0,
        "questions": [{"id": qid, "question": f"Question {qid}?"} for qid, _, _ in rows],
    }
    (path / "run.json").write_text(json.dumps(manifest))
    (path / "results.jsonl").write_text("".join(json.dumps(_record(*row)) + "\n" for row in rows))
    return path


@pytest.fixture
def env(rlm_home, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-000000000000000000")
    monkeypatch.setenv("RLM_DOCS_CACHE", "off")
    return tmp_path


def test_an_old_run_reads_by_the_caveat_rule_and_prose_golds_need_a_judge(env, capsys):
    run = old_run(env / "old")
    _, rows = load_run(run)  # read with the current scorer
    by_id = {r["id"]: r for r in rows}
    assert by_id["lincoln"]["answer"] == ["Not answerable"]
    assert by_id["lincoln"]["caveat"].startswith("the corpus has no survey about Lincoln")
    assert (by_id["lincoln"]["stage"], by_id["lincoln"]["score"]) == ("unanswerable", 1.0)
    for qid in ("ratio", "working_capital", "capex"):
        assert (by_id[qid]["stage"], by_id[qid]["score"]) == ("numeric", 1.0), qid
    assert by_id["ratio"]["caveat"] == "using average total assets ... gives 0.595"
    adobe = by_id["adobe"]
    assert (adobe["stage"], adobe["score"], adobe["correct"]) == ("needs_judge", None, None)
    assert adobe["error_type"] is None and adobe["anls"] < 0.5

    assert main(["rescore", str(run)]) == 0
    out = capsys.readouterr().out
    assert "accuracy 100.0%" in out and "4/4 decided; 1 need --judge" in out
    manifest = json.loads((run / "run.json").read_text())
    assert manifest["scoring_version"] >= 3 and manifest["judge"] is None
    stored = [json.loads(x) for x in (run / "results.jsonl").read_text().splitlines()]
    assert [r["id"] for r in stored] == [row[0] for row in OLD_ROWS]
    assert stored[1]["answer"][0] == "0.627" and "caveat" in stored[1]
    assert not (run / PROGRESS_FILE).exists()
    report = build_report([run], env / "report")
    assert "4 decided, 1 need judge" in report["markdown"]
    assert any("rlm-docs rescore" in n and "1 need --judge" in n for n in report["notes"])


def test_rescore_with_a_loopback_judge_scores_prose_golds_and_books_judge_spend(env, capsys):
    run = old_run(env / "old")
    with ChatServer(reply=lambda messages: VERDICT) as judge:
        spec = f"openai:judge-model@{judge.base_url}"
        assert main(["rescore", str(run), "--judge", spec]) == 0
        prompts = [r.body["messages"][0]["content"] for r in judge.requests]
    assert len(prompts) == 1  # only the prose gold reached the judge
    assert 'Predicted Answer: ["No", "Operating margin fell' in prompts[0]
    assert "Gold Answer Variants" in prompts[0] and "A drop by 2.2% in a year." in prompts[0]
    assert "rescored 5 questions" in capsys.readouterr().out
    manifest, rows = load_run(run)
    assert manifest["judge"] == spec
    adobe = next(r for r in rows if r["id"] == "adobe")
    assert (adobe["stage"], adobe["score"], adobe["judgment"]) == ("judge", 1.0, "correct")
    assert adobe["judge_calls"] == 1 and [e["role"] for e in adobe["ledger"]] == ["root", "judge"]
    ledger = [json.loads(x) for x in (run / "ledger.jsonl").read_text().splitlines()]
    assert [e["role"] for e in ledger].count("judge") == 1
    report = build_report([run], env / "report")
    assert any("Rogan–Gladen" in n for n in report["notes"])
    assert "need judge" not in report["markdown"]


def test_sigkilled_rescore_resumes_without_judging_a_question_twice(env):
    many = [(f"p{i:02d}", [[ADOBE]], [f"No, margins fell ({i})"]) for i in range(10)]
    run = old_run(env / "many", many)
    with ChatServer(reply=lambda messages: VERDICT, latency_s=0.3) as judge:
        spec = f"openai:judge-model@{judge.base_url}"
        argv = [sys.executable, "-m", "rlm_docs", "rescore", str(run), "--judge", spec]
        proc = subprocess.Popen(argv, cwd=REPO, env=dict(os.environ), stderr=subprocess.PIPE)
        progress = run / PROGRESS_FILE
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if progress.exists() and progress.read_bytes().count(b"\n") >= 4:
                break
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        recorded = progress.read_bytes().count(b"\n") - 1  # the settings line
        assert 3 <= recorded < 10
        # nothing was replaced yet: the run still reads as the old one
        assert json.loads((run / "run.json").read_text())["judge"] is None
        before = len(judge.requests)
        assert main(["rescore", str(run), "--judge", spec]) == 0
        assert len(judge.requests) - before == 10 - recorded
    _, rows = load_run(run)
    assert [r["stage"] for r in rows] == ["judge"] * 10
    assert all(r["judge_calls"] == 1 for r in rows)
    assert not progress.exists()


def test_eval_says_what_needs_a_judge_and_rescore_then_scores_it(env, capsys):
    from tests.fixtures.eval.support import build_store

    store = build_store(env / "store")
    prose = "Acme's revenue grew in fiscal 2022 to $4.2 billion, helped by higher prices."
    dataset = env / "q.jsonl"
    dataset.write_text(
        json.dumps(
            {"id": "v", "question": "What was Acme revenue for fiscal 2022?",
             "answer_variants": [["$4.2 billion"]], "evidence": []}
        ) + "\n" + json.dumps(
            {"id": "p", "question": "How did Acme revenue change in fiscal 2022?",
             "answer_variants": [[prose]], "evidence": []}
        ) + "\n"
    )  # fmt: skip

    def reply(messages: list[dict]) -> str:
        text = str(messages[0]["content"])
        values = ["Increased"] if "How did" in text.rsplit("Question:", 1)[-1] else ["$4.2 billion"]
        record = {"values": values, "explanation": "Revenue rose to $4.2 billion.", "caveat": ""}
        return json.dumps(record | {"citations": []})

    out = env / "run"
    with ChatServer(reply=reply) as model:
        argv = ["eval", "--dataset", str(dataset), "--corpus", str(store), "--system",
                "static-rag", "--model", f"openai:m@{model.base_url}", "--out", str(out),
                "--no-progress"]  # fmt: skip
        assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "accuracy 100.0%" in printed
    assert f"1/1 decided; 1 need --judge (rlm-docs rescore {out} --judge MODEL)" in printed
    _, rows = load_run(out)
    assert [r["stage"] for r in rows] == ["numeric", "needs_judge"]
    assert rows[1]["explanation"] == "Revenue rose to $4.2 billion." and rows[1]["caveat"] == ""
    with ChatServer(reply=lambda messages: VERDICT) as judge:
        assert main(["rescore", str(out), "--judge", f"openai:j@{judge.base_url}"]) == 0
        assert "Revenue rose to $4.2 billion." in judge.requests[0].body["messages"][0]["content"]
    _, rows = load_run(out)
    assert [r["stage"] for r in rows] == ["numeric", "judge"]


def test_rescore_waits_for_no_one_it_refuses_a_run_another_process_writes(env, capsys):
    from rlm_docs.eval.rundir import EvalRunDir

    run = old_run(env / "old")
    before = (run / "results.jsonl").read_bytes()
    with EvalRunDir(run).lock():
        assert main(["rescore", str(run)]) == 2
    assert "rlm-docs rescore: error:" in capsys.readouterr().err
    assert (run / "results.jsonl").read_bytes() == before and not (run / PROGRESS_FILE).exists()
    assert main(["rescore", str(run)]) == 0  # once the writer is gone
