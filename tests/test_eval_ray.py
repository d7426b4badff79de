"""The Ray executor on a real two-node Ray cluster on 127.0.0.1 (`tests/fixtures/ray_cluster`).

One cluster serves the module; the node-kill test adds a third node and removes it mid-run.
Skipped, with the measured free memory in the reason, where the cluster cannot start.
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from rlm_docs.cli import main
from rlm_docs.eval.rundir import EvalRunDir, load_run
from tests.fixtures.cli import run_without_ray
from tests.fixtures.eval.support import QUESTIONS, build_store, fake_model
from tests.fixtures.ray_cluster import NODE_ARGS, loopback_cluster, skip_reason
from tests.servers.chat import ChatServer

pytestmark = pytest.mark.ray_cluster
REPO = Path(__file__).resolve().parents[1]
# Fields that differ between two runs of the same question (times, files, process ids).
_VOLATILE = {"wall_s", "trajectory", "ledger"}


@pytest.fixture(scope="module")
def cluster():
    reason = skip_reason(nodes=2)
    if reason:
        pytest.skip(reason)
    with loopback_cluster(nodes=2) as c:
        yield c


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return build_store(tmp_path_factory.mktemp("ray") / "store")


@pytest.fixture
def env(rlm_home, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-000000000000000000")
    monkeypatch.setenv("RLM_DOCS_CACHE", "off")
    return tmp_path


def _eval(store, out, *extra, dataset=QUESTIONS):
    return main(
        ["eval", "--dataset", str(dataset), "--corpus", str(store), "--out", str(out),
         "--no-progress", *extra]
    )  # fmt: skip


def _comparable(run_dir):
    _, rows = load_run(run_dir)
    out = {}
    for r in rows:
        row = {k: v for k, v in r.items() if k not in _VOLATILE}
        if "budget" in row:  # the seconds used and left differ run to run, as wall_s does
            row["budget"] = {k: v for k, v in row["budget"].items() if k != "wall_s"}
        out[r["id"]] = row
    return out


def _recorded_ids(run_dir):
    lines = (Path(run_dir) / "results.jsonl").read_text().splitlines()
    return [json.loads(line)["id"] for line in lines]


def _trajectory_pids(run_dir):
    """Process ids in the trajectory file names (`rlm_<id>_<pid>_<ns>.jsonl`)."""
    return {p.name.rsplit("_", 2)[1] for p in (Path(run_dir) / "trajectories").glob("*.jsonl")}


def test_ray_runs_match_the_thread_executor_on_both_nodes(cluster, env, store):
    for system in ("rlm", "static-rag"):
        args = ("--system", system, "--model", "offline", "--workers", "2")
        assert _eval(store, env / f"{system}-thread", *args) == 0
        assert _eval(store, env / f"{system}-ray", *args, "--executor", "ray") == 0
        thread, ray_run = _comparable(env / f"{system}-thread"), _comparable(env / f"{system}-ray")
        assert thread == ray_run and len(ray_run) == 6
        # every trajectory came back to the driver's run directory, one per question
        rows = load_run(env / f"{system}-ray")[1]
        files = sorted(p.name for p in (env / f"{system}-ray" / "trajectories").iterdir())
        assert sorted(Path(r["trajectory"]).name for r in rows) == files and len(files) == 6
        assert all(Path(r["trajectory"]).parent == env / f"{system}-ray" / "trajectories"
                   for r in rows)  # fmt: skip
        # written by the nodes' actors (Ray worker processes), not by this process; an actor
        # ready first may take all six before the other starts, so one or two of them
        pids = _trajectory_pids(env / f"{system}-ray")
        assert 1 <= len(pids) <= 2 and str(os.getpid()) not in pids


def test_a_shipped_store_gives_the_same_results(cluster, env, store):
    args = ("--system", "rlm", "--model", "offline", "--executor", "ray")
    assert _eval(store, env / "path", *args) == 0
    assert _eval(store, env / "shipped", *args, "--ray-ship-corpus") == 0
    assert _comparable(env / "path") == _comparable(env / "shipped")
    manifest, _ = load_run(env / "shipped")
    assert manifest["corpus"] == str(store.resolve())  # resumable like any run


def _sandbox_environs() -> list[str]:
    """Environments of the sandbox fork servers started by Ray actors, and of their workers."""
    procs = {}
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                stat = (proc / "stat").read_text()
                procs[proc.name] = (
                    stat.rsplit(")", 1)[1].split()[1],
                    (proc / "cmdline").read_bytes(),
                )
            except OSError:
                continue
    servers = {
        pid for pid, (ppid, cmd) in procs.items()
        if b"sandbox.fork_server" in cmd and procs.get(ppid, ("", b""))[1].startswith(b"ray::NodeWorker")
    }  # fmt: skip
    workers = {pid for pid, (ppid, _) in procs.items() if ppid in servers}
    out = []
    for pid in servers | workers:
        try:
            out.append(Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace"))
        except OSError:
            continue
    return out


@pytest.mark.skipif(os.geteuid() != 0, reason="reading another user's /proc entry needs root")
def test_the_api_key_reaches_ray_workers_but_no_sandbox_and_no_file(cluster, env, store):
    import ray

    key = f"sk-ray-{uuid.uuid4().hex}"
    seen: list[list[str]] = []

    def reply(messages):
        if not any(m["role"] == "assistant" for m in messages):
            return "```repl\nx = 1\n```"  # the question's sandbox starts
        seen.append(_sandbox_environs())  # while it is alive
        return "FINAL(Springfield)"

    os.environ["OPENAI_API_KEY"] = key  # monkeypatch (env fixture) restores it
    with ChatServer(reply=reply, api_key=key) as server:
        out = env / "keyed"
        model = f"openai:fake@{server.base_url}"
        args = ("--system", "rlm", "--model", model, "--executor", "ray", "--limit", "2")
        assert _eval(store, out, *args) == 0
        # the server refuses requests without the key: every question reached it with the key
        assert len(server.requests) >= 4 and all(r.authorized for r in server.requests)
    assert [r["status"] for r in load_run(out)[1]] == ["ok", "ok"]
    assert sum(1 for environs in seen if environs) >= 2  # sandbox processes were found
    assert not any(key in e or "OPENAI_API_KEY" in e for environs in seen for e in environs)
    session = ray._private.worker._global_node.get_session_dir_path()
    for root in (out, env / "home", session):
        hits = subprocess.run(["grep", "-rl", key, str(root)], capture_output=True, text=True)
        assert hits.stdout == "", f"the key was written to {hits.stdout}"


def test_a_cluster_named_in_a_sweep_spec_gets_no_key_unless_allowed(cluster, env, store):
    key = f"sk-ray-{uuid.uuid4().hex}"
    os.environ["OPENAI_API_KEY"] = key  # monkeypatch (env fixture) restores it
    with ChatServer(reply=fake_model, api_key=key, refuse=False) as server:
        spec = env / "ray.toml"
        spec.write_text(
            f"""
[sweep]
executor = "ray"
ray-address = "{cluster.address}"
workers = 1
[grid]
system = "static-rag"
model = "openai:fake@{server.base_url}"
[[data]]
dataset = "{QUESTIONS}"
corpus = "{store}"
limit = 2
""",
            encoding="utf-8",
        )
        model_server = server.url.removeprefix("http://")
        base = ["sweep", str(spec), "--no-progress", "--allow-endpoint", model_server]
        # the model server is allowed, the cluster is not: the actors get no key to send
        assert main([*base, "--out", str(env / "withheld")]) == 0
        assert server.requests and not any(r.authorized for r in server.requests)
        server.requests.clear()
        allowed = [*base, "--allow-endpoint", cluster.address, "--out", str(env / "allowed")]
        assert main(allowed) == 0
        assert server.requests and all(r.authorized for r in server.requests)


def _copies(questions: Path, n: int, path: Path) -> Path:
    """`questions` repeated `n` times under new ids, written to `path`."""
    rows = [json.loads(line) for line in questions.read_text().splitlines()]
    path.write_text(
        "".join(json.dumps(r | {"id": f"{i}-{r['id']}"}) + "\n" for i in range(n) for r in rows)
    )
    return path


def _actor_pids(raylet: int) -> set[int]:
    """Processes of the node whose raylet is `raylet` that host a `NodeWorker` actor (Ray
    titles them `ray::NodeWorker`, `ray::NodeWorker.run` while one runs a question; a node's
    worker processes are its raylet's children)."""
    pids = set()
    for proc in Path("/proc").iterdir():
        try:
            parent = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if parent == raylet and (proc / "cmdline").read_bytes().startswith(b"ray::NodeWorker"):
                pids.add(int(proc.name))
        except (OSError, ValueError):
            continue
    return pids


class _HeldModel:
    """A model that, from `hold()` on, keeps replies back until `release()` and says when three
    calls are held at once (`three_held`). Each node runs one question (one call) at a time, so
    three held calls are one in flight on each of three nodes: a test can then act on a node
    with a question surely in flight, however slowly the nodes start on a loaded machine. A
    held call waits at most 90 s, under the client's 120 s timeout, so no retry doubles it."""

    def __init__(self, release_at_three: bool = False) -> None:
        self.release_at_three = release_at_three
        self.three_held = threading.Event()
        self._released = threading.Event()
        self._released.set()
        self._lock = threading.Lock()
        self._held = 0

    def hold(self) -> None:
        with self._lock:
            self._released.clear()
            self._held = 0

    def release(self) -> None:
        self._released.set()

    def __call__(self, messages):
        with self._lock:
            held = not self._released.is_set()
            if held:
                self._held += 1
                if self._held == 3:
                    self.three_held.set()
                    if self.release_at_three:
                        self._released.set()
        if held:
            self._released.wait(90)
        return fake_model(messages)


def test_a_node_killed_mid_run_loses_and_repeats_nothing(cluster, env, store, tmp_path):
    # 18 questions (the fixture's 6, three times) at 1 s per model call, one at a time per
    # node on three nodes. Once a result is recorded the model holds its replies; when each
    # node has a call held, the third node dies with its question in flight, then replies go on.
    dataset = _copies(QUESTIONS, 3, tmp_path / "many.jsonl")
    victim = cluster.add_node(**NODE_ARGS)
    cluster.wait_for_nodes()
    out = env / "killed"
    killed = threading.Event()
    held = _HeldModel()

    def kill_mid_run():
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if (out / "results.jsonl").exists() and (out / "results.jsonl").read_text():
                break
            time.sleep(0.05)
        held.hold()
        try:
            if held.three_held.wait(90):
                cluster.remove_node(victim, allow_graceful=False)
                killed.set()
        finally:
            held.release()

    with ChatServer(reply=held, latency_s=1.0) as server:
        killer = threading.Thread(target=kill_mid_run, daemon=True)
        killer.start()
        model = f"openai:fake@{server.base_url}"
        base = ("--system", "static-rag", "--model", model)
        args = (*base, "--executor", "ray", "--workers", "1")
        assert _eval(store, out, *args, dataset=dataset) == 0
        killer.join()
        calls = len(server.requests)
        thread = env / "thread"
        assert _eval(store, thread, *base, "--workers", "6", dataset=dataset) == 0
    assert killed.is_set()
    ids = _recorded_ids(out)
    assert sorted(ids) == sorted(json.loads(x)["id"] for x in dataset.read_text().splitlines())
    assert len(ids) == len(set(ids)) == 18
    assert calls > 18  # the question in flight on the killed node was asked again elsewhere
    rows = load_run(out)[1]
    assert all(r["status"] == "ok" for r in rows)
    files = sorted(p.name for p in (out / "trajectories").iterdir())
    assert sorted(Path(r["trajectory"]).name for r in rows) == files and len(files) == 18
    assert _comparable(out) == _comparable(thread)  # as if no node had died
    # a resume finds nothing left to do
    assert _eval(store, out, *args, "--resume", dataset=dataset) == 0
    assert len(_recorded_ids(out)) == 18


def test_a_node_that_joins_mid_run_takes_waiting_questions(cluster, env, store, tmp_path):
    # 24 questions at 1 s per model call, one at a time per node. A third node joins once the
    # first result is recorded; from then on the model holds its replies until the new node
    # has a call held too, so it must run some of the rest. The driver is a process of its own:
    # Ray adds a node only from a main thread.
    dataset = _copies(QUESTIONS, 4, tmp_path / "many.jsonl")
    out = env / "joined"
    model = _HeldModel(release_at_three=True)
    with ChatServer(reply=model, latency_s=1.0) as server:
        driver = subprocess.Popen(
            [sys.executable, "-m", "rlm_docs", "eval", "--dataset", str(dataset),
             "--corpus", str(store), "--out", str(out), "--no-progress",
             "--system", "static-rag", "--model", f"openai:fake@{server.base_url}",
             "--executor", "ray", "--ray-address", cluster.address, "--workers", "1"],
            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and driver.poll() is None:
            if EvalRunDir(out).read_results():
                break
            time.sleep(0.05)
        model.hold()
        joiner = cluster.add_node(**NODE_ARGS)
        try:
            raylet = joiner.all_processes["raylet"][0].process.pid
            pids: set[int] = set()
            while driver.poll() is None:  # actors are killed when the run ends: note them now
                pids |= _actor_pids(raylet)
                time.sleep(0.05)
        finally:
            cluster.remove_node(joiner)
        _, stderr = driver.communicate(timeout=60)
    assert driver.returncode == 0, stderr
    ids = _recorded_ids(out)
    assert len(ids) == len(set(ids)) == 24
    assert all(r["status"] == "ok" for r in load_run(out)[1])
    by_joiner = _trajectory_pids(out) & {str(pid) for pid in pids}
    assert by_joiner, "the node that joined ran no question"


def test_without_ray_the_flag_fails_in_one_line(tmp_path, store):
    argv = ["eval", "--dataset", str(QUESTIONS), "--corpus", str(store), "--system", "rlm",
            "--model", "offline", "--out", str(tmp_path / "r"), "--executor", "ray"]  # fmt: skip
    proc = run_without_ray(argv, tmp_path / "home")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "rlm-docs eval: error: --executor ray needs Ray, which is not installed: "
        'pip install -e ".[ray]"'
    ]
    assert not (tmp_path / "r").exists()


def test_a_store_unreadable_on_the_nodes_stops_the_run_with_its_reason(cluster, env, store):
    # The driver reads the store; the Ray nodes are told a path that holds none.
    from rlm_docs.errors import ConfigError
    from rlm_docs.eval.dataset import load_questions
    from rlm_docs.eval.question_task import QuestionTask
    from rlm_docs.eval.ray_executor import RayExecutor

    task = QuestionTask(corpus=str(env / "nowhere"), system="rlm", model="offline")
    with pytest.raises(ConfigError, match=r"Ray node \w+: CorpusError: .*nowhere"):
        list(RayExecutor(1).map_unordered(task, load_questions(QUESTIONS)))


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGINT], ids=["kill", "ctrl-c"])
def test_a_stopped_driver_resumes_on_the_cluster_without_loss_or_repeat(
    cluster, env, store, tmp_path, signum
):
    dataset = _copies(QUESTIONS, 2, tmp_path / "twelve.jsonl")
    out = env / "resumed"
    with ChatServer(reply=fake_model, latency_s=1.0) as server:
        args = [
            "--system", "static-rag", "--model", f"openai:fake@{server.base_url}",
            "--executor", "ray", "--ray-address", cluster.address, "--workers", "1",
        ]  # fmt: skip
        driver = subprocess.Popen(
            [sys.executable, "-m", "rlm_docs", "eval", "--dataset", str(dataset),
             "--corpus", str(store), "--out", str(out), "--no-progress", *args],
            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and driver.poll() is None:
            if len(EvalRunDir(out).read_results()) >= 2:
                break
            time.sleep(0.05)
        driver.send_signal(signum)
        _, stderr = driver.communicate(timeout=60)
        before = _recorded_ids(out)
        assert 2 <= len(before) < 12  # stopped mid-run
        if signum == signal.SIGINT:  # Ctrl-C: exit 130, the resume command, no traceback
            assert driver.returncode == 130 and "--resume" in stderr
            assert "Traceback" not in stderr
        assert _eval(store, out, *args, "--resume", dataset=dataset) == 0
    ids = _recorded_ids(out)
    assert ids[: len(before)] == before and sorted(set(ids)) == sorted(ids) and len(ids) == 12
    rows = load_run(out)[1]
    files = sorted(p.name for p in (out / "trajectories").iterdir())
    assert sorted(Path(r["trajectory"]).name for r in rows) == files and len(files) == 12


def test_an_unreachable_ray_address_is_one_line(tmp_path, store):
    proc = subprocess.run(
        [sys.executable, "-m", "rlm_docs", "eval", "--dataset", str(QUESTIONS),
         "--corpus", str(store), "--system", "rlm", "--model", "offline",
         "--out", str(tmp_path / "r"), "--executor", "ray", "--ray-address", "127.0.0.1:1"],
        capture_output=True, text=True, cwd=REPO,
        env=os.environ | {"RLM_DOCS_HOME": str(tmp_path / "home")},
    )  # fmt: skip
    if "needs Ray, which is not installed" in proc.stderr:
        pytest.skip('ray is not installed (pip install -e ".[ray]")')
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "rlm-docs eval: error: --ray-address 127.0.0.1:1: no Ray cluster answers there "
        "(Connection refused)"
    ]
    assert not (tmp_path / "r").exists()
