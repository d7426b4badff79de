"""The OS layer alone: a process confined by `sandbox.confine` running *unrestricted* Python
(as if the RestrictedPython layer had been bypassed) still cannot reach the network, start
processes, signal others, escape its directory, or exceed its rlimits."""

import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

SCRIPT = textwrap.dedent(
    """
    import json, os, resource, socket, subprocess, sys, threading
    from sandbox import confine

    workdir = sys.argv[1]
    info = confine.confine(workdir, memory_mb=1024, open_files=64, file_mb=1, processes=64)
    results = {}

    def attempt(name, fn):
        try:
            fn()
            results[name] = "allowed"
        except BaseException as exc:
            results[name] = type(exc).__name__

    def thread():
        t = threading.Thread(target=lambda: None)
        t.start()
        t.join()

    attempt("socket", lambda: socket.socket())
    attempt("fork", lambda: os.fork())
    attempt("exec", lambda: os.execv("/bin/true", ["true"]))
    attempt("subprocess", lambda: subprocess.run(["/bin/true"]))
    attempt("kill_init", lambda: os.kill(1, 0))
    attempt("kill_parent", lambda: os.kill(os.getppid(), 0))
    attempt("thread", thread)
    attempt("proc_environ", lambda: open("/proc/self/environ").read())
    attempt("write_tmp", lambda: open("/tmp/escape-" + str(os.getpid()), "w").write("x"))
    attempt("raise_memory", lambda: resource.setrlimit(resource.RLIMIT_AS, (-1, -1)))
    attempt("setuid_root", lambda: os.setuid(0))
    attempt("big_file", lambda: open("big.bin", "wb").write(b"x" * 2_000_000))
    attempt("memory", lambda: bytearray(2 * 1024 ** 3))
    attempt("fds", lambda: [os.pipe() for _ in range(64)])
    print(json.dumps({"info": info, "results": results}))
    """
)


@pytest.fixture(scope="module")
def confined() -> dict:
    with tempfile.TemporaryDirectory() as workdir:
        if os.geteuid() == 0:
            os.chown(workdir, 65534, 65534)
        proc = subprocess.run(
            [sys.executable, "-c", SCRIPT, workdir],
            capture_output=True,
            text=True,
            timeout=60,
            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
        )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_rlimits_hold_without_the_python_layer(confined):
    results = confined["results"]
    assert results["big_file"] == "OSError"  # EFBIG from RLIMIT_FSIZE
    assert results["memory"] == "MemoryError"
    assert results["fds"] == "OSError"  # EMFILE
    assert results["raise_memory"] == "ValueError"
    assert results["thread"] == "allowed"


@pytest.mark.skipif(os.geteuid() != 0, reason="dropping privileges needs root")
def test_privileges_dropped_and_filesystem_hidden(confined):
    info, results = confined["info"], confined["results"]
    assert info["uid"] == 65534 and info["gid"] == 65534 and info["chroot"]
    assert info["rlimits"]["RLIMIT_NPROC"] == 64
    assert results["proc_environ"] == "FileNotFoundError"
    assert results["write_tmp"] == "FileNotFoundError"
    assert results["setuid_root"] == "PermissionError"


def test_seccomp_blocks_network_and_processes(confined):
    if not confined["info"]["seccomp"]:
        pytest.skip(confined["info"]["seccomp_problem"])
    results = confined["results"]
    for name in ("socket", "fork", "exec", "subprocess", "kill_init", "kill_parent"):
        assert results[name] == "PermissionError", name
