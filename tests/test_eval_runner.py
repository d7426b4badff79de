import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from rlm_docs.cli import main
from rlm_docs.eval.aggregate import summarize
from rlm_docs.eval.report import build_report
from rlm_docs.eval.rundir import EvalRunDir, load_run
from tests.fixtures.eval.support import QUESTIONS, build_store, fake_model
from tests.servers.chat import ChatServer

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return build_store(tmp_path_factory.mktemp("eval") / "store")


@pytest.fixture
def env(rlm_home, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-000000000000000000")
    monkeypatch.setenv("RLM_DOCS_CACHE", str(tmp_path / "cache.sqlite"))
    return tmp_path


@pytest.fixture(scope="module")
def server():
    with ChatServer(reply=fake_model) as srv:
        yield srv


def _eval(store, server, out, *extra):
    return main(
        [
            "eval",
            "--dataset", str(QUESTIONS),
            "--corpus", str(store),
            "--model", f"openai:fake@{server.base_url}",
            "--out", str(out),
            "--no-progress",
            *extra,
        ]
    )  # fmt: skip


def _ids(run_dir):
    lines = (Path(run_dir) / "results.jsonl").read_text().splitlines()
    return [json.loads(line)["id"] for line in lines]


def test_static_rag_run_writes_results_parquet_and_madqa_predictions(env, store, server):
    out = env / "run"
    assert _eval(store, server, out, "--system", "static-rag", "--workers", "3") == 0
    assert sorted(_ids(out)) == ["q1", "q2", "q3", "q4", "q5", "q6"]
    manifest, rows = load_run(out)
    by_id = {r["id"]: r for r in rows}
    # exact answer, gold page cited
    assert by_id["q1"]["score"] == 1.0 and by_id["q1"]["page_f1"] == 1.0
    # "12,500 employees in total" vs "12,500": ANLS* below 0.5, but the number is right
    assert by_id["q5"]["stage"] == "numeric" and by_id["q5"]["correct"] is True
    assert by_id["q5"]["anls"] < 0.5 and by_id["q5"]["error_type"] is None
    assert by_id["q3"]["error_type"] == "refusal"
    assert all(r["steps"] == 1 and r["status"] == "ok" for r in rows)
    table = pq.read_table(out / "predictions.parquet").to_pylist()
    assert [r["id"] for r in table] == ["q1", "q2", "q3", "q4", "q5", "q6"]
    assert table[0]["answer"] == ["$4.2 billion"]
    madqa = [json.loads(x) for x in (out / "predictions.madqa.jsonl").read_text().splitlines()]
    assert set(madqa[0]) == {"id", "question", "answer", "citations", "iterations"}
    assert madqa[0]["citations"] == [{"file": "acme_2022_10k", "page": 2}]
    ledger = [json.loads(x) for x in (out / "ledger.jsonl").read_text().splitlines()]
    assert len(ledger) == 6 and {e["role"] for e in ledger} == {"root"}
    assert sum(e["input_tokens"] for e in ledger) == sum(r["input_tokens"] for r in rows)
    assert len(list((out / "trajectories").glob("*.jsonl"))) == 6
    assert manifest["system"] == "static-rag" and manifest["budget"]["max_steps"] == 20
    assert "sk-test-key" not in (out / "results.jsonl").read_text()


def test_judge_scores_non_exact_answers_in_the_ledger_and_cache(env, store, server):
    with ChatServer(
        reply=lambda m: "The answer matches.\nJUDGMENT: partial\nMAIN_ISSUE: verbosity_medium"
    ) as judge:
        for name in ("a", "b"):
            out = env / name
            code = _eval(
                store, server, out, "--system", "static-rag", "--limit", "5",
                "--judge", f"openai:judge@{judge.base_url}",
            )  # fmt: skip
            assert code == 0
        # q3 and q4 (two-item golds) are refused with text: q4's gold has text, so it goes to
        # the judge; q3's gold is two amounts, and the numeric stage settles it (no number in
        # the answer: wrong) as it settles q5's verbose but right answer
        assert len(judge.requests) == 1
    _, rows = load_run(env / "a")
    by_id = {r["id"]: r for r in rows}
    assert by_id["q5"]["stage"] == "numeric" and by_id["q5"]["score"] == 1.0
    assert by_id["q3"]["stage"] == "numeric" and by_id["q3"]["score"] == 0.0
    assert by_id["q4"]["stage"] == "judge" and by_id["q4"]["score"] == 0.5
    assert by_id["q2"]["stage"] == "exact" and by_id["q2"]["judge_calls"] == 0
    second = [json.loads(x) for x in (env / "b" / "ledger.jsonl").read_text().splitlines()]
    judged = [e for e in second if e["role"] == "judge"]
    assert len(judged) == 1 and all(e["cached"] for e in judged)
    report = build_report([env / "a"], env / "rep")
    # raw 3.5/5 = 0.7 -> Rogan-Gladen with se 0.98, sp 1.0: 0.7 / 0.98 = 71.4%
    assert "| 5 | 71.4% [" in report["markdown"]
    assert "Rogan–Gladen corrected" in report["notes"][0] and "raw 70.0%" in report["notes"][0]


def test_resume_refuses_other_settings_and_existing_dir(env, store, server, capsys):
    out = env / "run"
    assert _eval(store, server, out, "--system", "static-rag", "--limit", "2") == 0
    assert _eval(store, server, out, "--system", "static-rag", "--limit", "2") == 2
    assert "pass --resume" in capsys.readouterr().err
    assert _eval(store, server, out, "--system", "bm25-agent", "--limit", "2", "--resume") == 2
    err = capsys.readouterr().err
    assert "cannot resume" in err and "system: 'static-rag' != 'bm25-agent'" in err
    assert _ids(out) == _ids(out)[:2] and len(_ids(out)) == 2
    limits = ["--system", "static-rag", "--limit", "2", "--resume", "--max-steps", "3"]
    assert _eval(store, server, out, *limits) == 2
    assert capsys.readouterr().err.strip() == (
        f"rlm-docs eval: error: {out}: cannot resume, settings differ from the original run "
        "(max_steps: 20 != 3)"
    )


def test_torn_tail_is_dropped_and_rerun_and_missing_counts_as_wrong(env, store, server):
    out = env / "run"
    assert (
        _eval(store, server, out, "--system", "static-rag", "--limit", "4", "--workers", "1") == 0
    )
    results = out / "results.jsonl"
    lines = results.read_text().splitlines(keepends=True)
    torn_id = json.loads(lines[-1])["id"]
    results.write_text("".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])
    manifest, rows = load_run(out)
    missing = [r for r in rows if r["status"] == "missing"]
    assert [r["id"] for r in missing] == [torn_id] and missing[0]["correct"] is False
    summary = summarize(rows, n_boot=10)
    assert summary["n"] == 4 and summary["status"]["missing"] == 1
    assert _eval(store, server, out, "--system", "static-rag", "--limit", "4", "--resume") == 0
    assert sorted(_ids(out)) == sorted(r["id"] for r in rows)


def test_bad_dataset_is_a_clear_error(env, store, server, capsys):
    bad = env / "bad.jsonl"
    bad.write_text(QUESTIONS.read_text().splitlines()[0] + '\n{"id": "x", "question": "q"}\n')
    code = main(
        ["eval", "--dataset", str(bad), "--corpus", str(store), "--system", "static-rag",
         "--model", "offline", "--out", str(env / "o"), "--no-progress"]
    )  # fmt: skip
    assert code == 2
    assert f"{bad}:2: field 'answer_variants'" in capsys.readouterr().err
    assert not (env / "o").exists()
    code = _eval(store, server, env / "o", "--system", "static-rag", "--judge", "offline")
    assert code == 2 and "cannot judge" in capsys.readouterr().err


def test_sigkilled_run_resumes_without_losing_or_duplicating(env, store, tmp_path):
    many = tmp_path / "many.jsonl"
    base = [json.loads(x) for x in QUESTIONS.read_text().splitlines()]
    many.write_text(
        "".join(json.dumps({**base[i % 6], "id": f"m{i:02d}"}) + "\n" for i in range(24))
    )
    out = tmp_path / "killed"
    with ChatServer(reply=fake_model, latency_s=0.25) as slow:
        argv = [
            sys.executable, "-m", "rlm_docs", "eval", "--dataset", str(many),
            "--corpus", str(store), "--system", "static-rag",
            "--model", f"openai:fake@{slow.base_url}", "--out", str(out),
            "--workers", "2", "--no-progress",
        ]  # fmt: skip
        proc = subprocess.Popen(argv, cwd=REPO, env=dict(os.environ), stderr=subprocess.PIPE)
        results = out / "results.jsonl"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if results.exists() and results.read_bytes().count(b"\n") >= 4:
                break
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        done_before = len(EvalRunDir(out).read_results())
        assert 4 <= done_before < 24
        assert main(argv[3:] + ["--resume"]) == 0
    ids = _ids(out)
    assert sorted(ids) == [f"m{i:02d}" for i in range(24)]
    assert len(ids) == len(set(ids))


class _InterruptAfter:
    """An executor that runs questions one by one and is 'Ctrl-C'ed after `n` results."""

    def __init__(self, n):
        self.n = n

    def map_unordered(self, fn, items):
        for i, item in enumerate(items):
            if i == self.n:
                raise KeyboardInterrupt
            yield fn(item)


def test_interrupted_run_keeps_finished_questions_and_resumes(env, store, server):
    from rlm_docs.eval.runner import EvalSettings, run_eval

    settings = EvalSettings(
        dataset=QUESTIONS,
        corpus=store,
        system="bm25-agent",
        model=f"openai:fake@{server.base_url}",
        out=env / "run",
        progress=False,
    )
    with pytest.raises(KeyboardInterrupt):
        run_eval(settings, executor=_InterruptAfter(2))
    assert len(_ids(env / "run")) == 2
    assert not (env / "run" / "predictions.parquet").exists()
    settings.resume = True
    summary = run_eval(settings)
    assert summary["ran_now"] == 4 and summary["n"] == 6
    assert sorted(_ids(env / "run")) == ["q1", "q2", "q3", "q4", "q5", "q6"]


def test_evidence_na_unknown_documents_and_one_ci_in_eval_and_report(env, store, server, capsys):
    lines = [json.loads(x) for x in QUESTIONS.read_text().splitlines()]
    lines[0]["evidence"] = [{"document": "acme_2022_10k", "page": None}]  # document-level
    lines[1]["evidence"] = []  # none
    lines[5]["evidence"] = [{"document": "initech_2099_8k", "page": 1}]  # not in the corpus
    dataset = env / "qs.jsonl"
    dataset.write_text("".join(json.dumps(x) + "\n" for x in lines))
    out = env / "run"
    code = main(
        ["eval", "--dataset", str(dataset), "--corpus", str(store), "--system", "static-rag",
         "--model", f"openai:fake@{server.base_url}", "--out", str(out), "--no-progress"]
    )  # fmt: skip
    assert code == 0
    captured = capsys.readouterr()
    assert "1 question(s) name evidence documents that are not in the corpus" in captured.err
    assert "q6: initech_2099_8k" in captured.err
    assert "page F1 " in captured.out and "(n=4 with page evidence)" in captured.out
    assert "doc F1 " in captured.out and "(n=5 with document evidence)" in captured.out
    _, rows = load_run(out)
    by_id = {r["id"]: r for r in rows}
    assert by_id["q1"]["page_f1"] is None and by_id["q1"]["doc_f1"] == 1.0
    assert by_id["q2"]["page_f1"] is None and by_id["q2"]["doc_f1"] is None
    report = build_report([out], env / "rep")
    row = report["markdown"].splitlines()[2]
    assert "(n=4)" in row and "(n=5)" in row  # Page F1 over 4 questions, Doc F1 over 5
    # the accuracy interval `eval` printed is the one the report shows
    printed = captured.out.split("accuracy ")[1].split(" (")[0]
    assert f"| 6 | {printed} |" in report["markdown"]
