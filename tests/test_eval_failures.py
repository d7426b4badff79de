"""Failed questions are loud and retryable: against a server answering HTTP 500 the real CLI
exits 3 and names the cause with its count; a plain resume keeps them failed; once the server
recovers `--resume --retry-failed` runs them again and replaces their rows (no duplicates, the
failed attempts' calls kept in the ledger); the report counts them as failed, not refusals; a
sweep cell with failed questions is not finished and its rerun retries it."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from rlm_docs.eval.failures import cause, failure_causes, failures_line
from rlm_docs.eval.rundir import EvalRunDir
from tests.fixtures.cli import SCRIPT
from tests.fixtures.eval.support import QUESTIONS, build_store, fake_model
from tests.servers.chat import ChatServer

pytestmark = pytest.mark.skipif(SCRIPT is None, reason="rlm-docs script not installed")


def test_causes_group_retried_errors_by_their_last_error():
    rows = [
        {
            "status": "failed",
            "error": f"ModelUnavailableError: m: gave up after 6 attempt(s) in "
            f"{s}s (last error: HTTP 500: boom)",
        }  # fmt: skip
        for s in (0.1, 0.4)
    ] + [{"status": "failed", "error": "CorpusError: index.bm25: unreadable"}, {"status": "ok"}]
    causes = failure_causes(rows)
    assert causes == [("HTTP 500: boom", 2), ("CorpusError: index.bm25: unreadable", 1)]
    assert failures_line(causes) == (
        "3 failed: HTTP 500: boom (2); CorpusError: index.bm25: unreadable (1)"
    )
    assert cause("x" * 500).endswith("...") and len(cause("x" * 500)) == 200


@pytest.fixture
def env(tmp_path):
    return {
        **os.environ,
        "OPENAI_API_KEY": "sk-test-key-000000000000000000",
        "RLM_DOCS_HOME": str(tmp_path / "home"),
        "RLM_DOCS_CACHE": "off",
    }


def _cli(env: dict, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SCRIPT, *argv], env=env, capture_output=True, text=True, timeout=300, check=False
    )


def _rows(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def test_failed_questions_exit_3_and_are_retried_after_the_server_recovers(tmp_path, env):
    store = build_store(tmp_path / "store")
    out = tmp_path / "run"
    with ChatServer(reply=fake_model) as server:
        server.outage(500, message="boom", retry_after=0)
        argv = [
            "eval", "--dataset", str(QUESTIONS), "--corpus", str(store),
            "--system", "static-rag", "--model", f"openai:fake@{server.base_url}",
            "--out", str(out), "--workers", "2", "--no-progress",
        ]  # fmt: skip
        down = _cli(env, *argv)
        assert down.returncode == 3, down.stderr
        assert "6 questions (6 run now)" in down.stdout and "failed 6, missing 0" in down.stdout
        assert "6 failed: HTTP 500: boom (6)\n" in down.stderr
        assert "--resume --retry-failed" in down.stderr and "Traceback" not in down.stderr

        still = _cli(env, *argv, "--resume")  # a plain resume does not retry
        assert still.returncode == 3 and "(0 run now)" in still.stdout

        report = _cli(env, "report", str(out), "--out", str(tmp_path / "report"))
        assert report.returncode == 0, report.stderr
        row = next(line for line in report.stdout.splitlines() if line.startswith("| static"))
        assert "| 0/0/0/0 | 6/0 |" in row  # failed, not refusals

        failed_calls = len((out / "ledger.jsonl").read_text().splitlines())
        served = len(server.requests)
        server.recover()
        retried = _cli(env, *argv, "--resume", "--retry-failed")
    assert retried.returncode == 0, retried.stderr
    assert "6 questions (6 run now)" in retried.stdout and "failed 0" in retried.stdout
    assert "failed:" not in retried.stderr
    rows = _rows(out)
    assert len(rows) == len({r["id"] for r in rows}) == 6
    assert all(r["status"] == "ok" for r in rows)
    attempts = EvalRunDir(out).read_attempts()
    assert len(attempts) == 6 and all(a["status"] == "failed" for a in attempts)
    ledger = (out / "ledger.jsonl").read_text().splitlines()
    assert len(ledger) == failed_calls + sum(len(r["ledger"]) for r in rows)
    assert sum(len(r["ledger"]) for r in rows) == len(server.requests) - served
    kept = {Path(r["trajectory"]).name for r in [*rows, *attempts]}
    assert {p.name for p in (out / "trajectories").iterdir()} == kept


def test_a_sweep_cell_with_failed_questions_is_retried_on_the_rerun(tmp_path, env):
    store = build_store(tmp_path / "store")
    with ChatServer(reply=fake_model) as server:
        spec = tmp_path / "sweep.toml"
        spec.write_text(
            f"""
[grid]
system = "static-rag"
model = "openai:fake@{server.base_url}"
[[data]]
name = "d"
dataset = "{QUESTIONS}"
corpus = "{store}"
limit = 2
""",
            encoding="utf-8",
        )
        out = tmp_path / "sweep"
        server.outage(503, message="down", retry_after=0)
        down = _cli(env, "sweep", str(spec), "--out", str(out), "--no-progress")
        assert down.returncode == 3, down.stderr
        assert "2 failed: HTTP 503: down (2)" in down.stderr
        assert "1 cell(s) with failed questions (d)" in down.stderr
        server.recover()
        again = _cli(env, "sweep", str(spec), "--out", str(out), "--no-progress")
    assert again.returncode == 0, again.stderr
    assert "finished, skipped" not in again.stdout
    rows = _rows(out / "d")
    assert len(rows) == 2 and all(r["status"] == "ok" for r in rows)


def test_retry_failed_needs_resume(tmp_path, capsys):
    from rlm_docs.cli import main

    argv = ["eval", "--dataset", str(QUESTIONS), "--corpus", "demo", "--system", "static-rag",
            "--model", "offline", "--out", str(tmp_path / "run"), "--retry-failed"]  # fmt: skip
    assert main(argv) == 2
    assert "--retry-failed continues a run: add --resume" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_a_step_limit_run_with_failed_questions_exits_3(tmp_path, env, monkeypatch, capsys):
    from rlm_docs.cli import main

    for name in ("OPENAI_API_KEY", "RLM_DOCS_HOME", "RLM_DOCS_CACHE"):
        monkeypatch.setenv(name, env[name])
    store = build_store(tmp_path / "store")
    with ChatServer(reply=fake_model) as server:
        server.outage(502, message="bad gateway", retry_after=0)
        argv = [
            "eval", "--dataset", str(QUESTIONS), "--corpus", str(store), "--system", "rlm",
            "--model", f"openai:fake@{server.base_url}", "--max-steps", "1,2", "--limit", "1",
            "--out", str(tmp_path / "run"), "--no-progress",
        ]  # fmt: skip
        assert main(argv) == 3
    err = capsys.readouterr().err
    assert "2 failed: HTTP 502: bad gateway (2)" in err  # one question at each of two limits
    assert "--max-steps 1,2" in err and "--resume --retry-failed" in err
