"""Ctrl-C during `rlm-docs eval` with model calls in flight: the installed script exits 130
while those calls are still blocked, prints the `--resume` command and no traceback (also on a
second Ctrl-C), and leaves no trajectory for a question it did not record; the resume then
finishes the run. SIGTERM (a batch scheduler's stop) does the same and exits 143."""

import json
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from rlm_docs.cli import main
from tests.fixtures.cli import SCRIPT, served_env, served_eval_argv
from tests.fixtures.eval.support import QUESTIONS, build_store, fake_model, question_of
from tests.servers.chat import ChatServer

QUICK = [json.loads(line)["question"] for line in QUESTIONS.read_text().splitlines()[:2]]


@pytest.mark.skipif(SCRIPT is None, reason="rlm-docs script not installed")
@pytest.mark.parametrize(
    ("sig", "code", "said"),
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated (SIGTERM)")],
)
def test_ctrl_c_cancels_in_flight_questions_and_prints_the_resume_hint(
    tmp_path, monkeypatch, sig, code, said
):
    store = build_store(tmp_path / "store")
    release = threading.Event()
    blocked: list[str] = []

    def reply(messages):
        question = question_of(messages)
        if question not in QUICK:
            blocked.append(question)
            release.wait(120)  # in flight until the test lets go (long after the exit)
        return fake_model(messages)

    env = served_env(tmp_path)
    out = tmp_path / "run"
    with ChatServer(reply=reply) as server:
        argv = served_eval_argv(QUESTIONS, store, server.base_url, out)
        proc = subprocess.Popen(
            [SCRIPT, *argv], env=env, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        try:
            deadline = time.monotonic() + 60
            while len(blocked) < 2 and time.monotonic() < deadline:
                assert proc.poll() is None, proc.stderr.read()
                time.sleep(0.05)
            assert len(blocked) == 2  # both workers are waiting on a model call
            proc.send_signal(sig)
            time.sleep(0.1)
            if proc.poll() is None:
                proc.send_signal(sig)  # an impatient second Ctrl-C (or scheduler)
            _, err = proc.communicate(timeout=60)
            assert not release.is_set()  # it left while the calls were still blocked
        finally:
            release.set()
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == code, err
        assert "Traceback" not in err and "Exception ignored" not in err
        assert f"rlm-docs eval: {said}; 2 finished question(s) are kept in" in err
        assert f"rlm-docs eval --dataset {QUESTIONS}" in err and "--resume" in err
        recorded = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
        assert sorted(r["question"] for r in recorded) == sorted(QUICK)
        trajectories = sorted(p.name for p in (out / "trajectories").iterdir())
        assert trajectories == sorted(Path(r["trajectory"]).name for r in recorded)

        for name in ("OPENAI_API_KEY", "RLM_DOCS_HOME", "RLM_DOCS_CACHE"):
            monkeypatch.setenv(name, env[name])
        assert main([*argv, "--resume"]) == 0
    lines = (out / "results.jsonl").read_text().splitlines()
    assert len(lines) == 6 and len(list((out / "trajectories").iterdir())) == 6


def test_interrupt_deletes_trajectories_of_unrecorded_questions(rlm_home, tmp_path, monkeypatch):
    """A question that finished but was never appended (the interrupt came first) leaves no
    trajectory; the library call re-raises KeyboardInterrupt for its caller."""
    from rlm_docs.eval.runner import EvalSettings, run_eval

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-000000000000000000")
    monkeypatch.setenv("RLM_DOCS_CACHE", "off")
    store = build_store(tmp_path / "store")

    class FinishThenInterrupt:
        """Runs two questions; the second finishes, then Ctrl-C arrives before it is kept."""

        def map_unordered(self, fn, items):
            items = list(items)
            yield fn(items[0])
            fn(items[1])
            raise KeyboardInterrupt

    with ChatServer(reply=fake_model) as server:
        settings = EvalSettings(
            dataset=QUESTIONS,
            corpus=store,
            system="static-rag",
            model=f"openai:fake@{server.base_url}",
            out=tmp_path / "run",
            progress=False,
        )
        with pytest.raises(KeyboardInterrupt):
            run_eval(settings, executor=FinishThenInterrupt())
    recorded = [
        json.loads(x) for x in (tmp_path / "run" / "results.jsonl").read_text().splitlines()
    ]
    assert len(recorded) == 1
    names = [p.name for p in (tmp_path / "run" / "trajectories").iterdir()]
    assert names == [Path(recorded[0]["trajectory"]).name]
