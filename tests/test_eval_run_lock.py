"""One writer per run directory: a killed run leaves no lock behind, and of two `eval --resume`
started at once on one run exactly one runs while the other exits 2 naming it; the run ends
with one row per question and a ledger of exactly the calls the server answered."""

import fcntl
import json
import os
import signal
import socket
import subprocess
import threading
import time

import pytest

from rlm_docs.errors import ConfigError
from rlm_docs.eval.run_lock import LOCK_NAME, RunLock
from tests.fixtures.cli import SCRIPT, served_env, served_eval_argv
from tests.fixtures.eval.support import QUESTIONS, build_store, fake_model
from tests.servers.chat import ChatServer


def test_a_second_lock_on_a_directory_is_refused_naming_the_holder(tmp_path):
    with RunLock(tmp_path / "run"), pytest.raises(ConfigError) as refused:
        RunLock(tmp_path / "run").acquire()
    message = str(refused.value)
    assert message.startswith(f"{tmp_path / 'run'}: another process is writing this run (pid ")
    assert f"pid {os.getpid()} on " in message and "\n" not in message
    with RunLock(tmp_path / "run"):  # released on exit: the next writer gets it
        pass


def test_a_sweep_directory_being_written_is_refused(rlm_home, tmp_path, capsys):
    from rlm_docs.cli import main

    spec = tmp_path / "sweep.toml"
    spec.write_text(
        f'[grid]\nsystem = "static-rag"\nmodel = "offline"\n[[data]]\nname = "d"\n'
        f'dataset = "{QUESTIONS}"\ncorpus = "demo"\nlimit = 1\n',
        encoding="utf-8",
    )
    with RunLock(tmp_path / "sweep"):
        assert main(["sweep", str(spec), "--out", str(tmp_path / "sweep")]) == 2
    err = capsys.readouterr().err
    assert "another process is writing this run (pid" in err and err.count("\n") == 1
    assert not (tmp_path / "sweep" / "d").exists()  # no cell was started


def _wait(predicate, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.mark.skipif(SCRIPT is None, reason="rlm-docs script not installed")
def test_two_concurrent_resumes_one_runs_the_other_is_refused(tmp_path):
    store = build_store(tmp_path / "store")
    release = threading.Event()
    started = threading.Event()

    def reply(messages):
        started.set()
        release.wait(120)  # every call waits until the test lets go
        return fake_model(messages)

    env = served_env(tmp_path)
    out = tmp_path / "run"
    with ChatServer(reply=reply) as server:
        argv = [SCRIPT, *served_eval_argv(QUESTIONS, store, server.base_url, out)]

        def start(*extra: str) -> subprocess.Popen:
            return subprocess.Popen(
                [*argv, *extra], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )

        # A run killed with calls in flight: the kernel drops its lock with the process.
        first = start()
        try:
            _wait(lambda: started.is_set() or first.poll() is not None)
            assert first.poll() is None, first.stderr.read()
            first.send_signal(signal.SIGKILL)
            first.wait(60)
        finally:
            if first.poll() is None:
                first.kill()
        assert (out / "run.json").exists() and not (out / "results.jsonl").exists()
        before = len(server.requests)

        both = [start("--resume"), start("--resume")]
        try:
            _wait(lambda: any(p.poll() is not None for p in both))  # the loser, while calls wait
            release.set()
            outputs = [p.communicate(timeout=120) for p in both]
        finally:
            release.set()
            for p in both:
                if p.poll() is None:
                    p.kill()
    codes = sorted(p.returncode for p in both)
    assert codes == [0, 2], outputs
    winner, loser = (0, 1) if both[0].returncode == 0 else (1, 0)
    err = outputs[loser][1]
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"{out}: another process is writing this run (pid {both[winner].pid} on " in err
    assert "eval --dataset" in err and "--resume" in err  # the holder's command
    assert "6 questions (6 run now)" in outputs[winner][0]

    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(rows) == len({r["id"] for r in rows}) == 6  # no question twice
    ledger = [json.loads(line) for line in (out / "ledger.jsonl").read_text().splitlines()]
    assert len(ledger) == sum(len(r["ledger"]) for r in rows)
    assert len(ledger) == len(server.requests) - before  # every call the resume made, once
    assert len(list((out / "trajectories").iterdir())) == 6


def test_the_refusal_names_the_new_holder_not_the_killed_one_before_it(tmp_path):
    """A holder writes its details just after it takes the lock: a newcomer refused in between
    must not name the previous holder, a process that is gone."""
    run = tmp_path / "run"
    run.mkdir()
    gone = subprocess.Popen(["true"])
    gone.wait()
    lock_file = run / LOCK_NAME
    lock_file.write_text(json.dumps({"pid": gone.pid, "host": socket.gethostname()}) + "\n")
    fd = os.open(lock_file, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # the new holder has the lock but has not written yet

    def write_details_late() -> None:
        time.sleep(0.3)
        me = {"pid": os.getpid(), "host": socket.gethostname(), "command": "rlm-docs eval"}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(me) + "\n").encode(), 0)

    writer = threading.Thread(target=write_details_late)
    writer.start()
    try:
        with pytest.raises(ConfigError, match=rf"\(pid {os.getpid()} on "):
            RunLock(run).acquire()
    finally:
        writer.join()
        os.close(fd)
