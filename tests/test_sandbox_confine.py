"""The OS layer alone: a process confined by `sandbox.confine` running *unrestricted* Python
(as if the RestrictedPython layer had been bypassed) still cannot reach the network (not even
through io_uring), start processes, signal others, escape its directory, fill the disk, or exceed its rlimits."""

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
    import ctypes, json, os, resource, socket, struct, subprocess, sys, threading
    from sandbox import confine

    workdir, victim = sys.argv[1], int(sys.argv[2])
    report = os.dup(1)  # confine() points stdio at /dev/null
    info = confine.confine(
        workdir, memory_mb=1024, open_files=64, file_mb=1, processes=64, disk_mb=4
    )
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    results = {}

    def attempt(name, fn):
        try:
            value = fn()
            results[name] = "allowed" if value is None else value
        except BaseException as exc:
            results[name] = type(exc).__name__

    def syscall(*args):
        value = libc.syscall(*args)
        return "allowed" if value >= 0 else os.strerror(ctypes.get_errno())

    def thread():
        t = threading.Thread(target=lambda: None)
        t.start()
        t.join()

    def fill_disk():
        for i in range(8):
            with open(f"fill{i}", "wb") as f:
                f.write(b"x" * ((1 << 20) - 1))

    sigqueue_info = ctypes.create_string_buffer(struct.pack("<iii", 0, 0, -1) + bytes(116))
    attempt("stderr_is_null", lambda: os.fstat(2).st_rdev == os.makedev(1, 3))
    attempt("socket", lambda: socket.socket())
    attempt("io_uring_setup", lambda: syscall(425, 8, ctypes.create_string_buffer(120)))
    attempt("fork", lambda: os.fork())
    attempt("exec", lambda: os.execv("/bin/true", ["true"]))
    attempt("subprocess", lambda: subprocess.run(["/bin/true"]))
    attempt("kill_init", lambda: os.kill(1, 0))
    attempt("kill_parent", lambda: os.kill(os.getppid(), 0))
    attempt("sigqueue_victim", lambda: syscall(129, victim, 0, sigqueue_info))
    attempt("pidfd_open_victim", lambda: syscall(434, victim, 0))
    attempt("pidfd_send_signal", lambda: syscall(424, 0, 0, None, 0))
    attempt("open_by_handle_at", lambda: syscall(304, 3, 0, 0))
    attempt("thread", thread)
    attempt("proc_environ", lambda: open("/proc/self/environ").read())
    attempt("write_tmp", lambda: open("/tmp/escape-" + str(os.getpid()), "w").write("x"))
    attempt("raise_memory", lambda: resource.setrlimit(resource.RLIMIT_AS, (-1, -1)))
    attempt("lower_nofile", lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (32, 32)))
    attempt("setuid_root", lambda: os.setuid(0))
    attempt("big_file", lambda: open("big.bin", "wb").write(b"x" * 2_000_000))
    attempt("fill_disk", fill_disk)
    attempt("memory", lambda: bytearray(2 * 1024 ** 3))
    attempt("fds", lambda: [os.pipe() for _ in range(64)])
    os.write(report, json.dumps({"info": info, "results": results}).encode())
    """
)


@pytest.fixture(scope="module")
def confined() -> dict:
    """Run SCRIPT confined, next to a sacrificial process (same uid as a worker without root)
    that it must not be able to signal."""
    victim = subprocess.Popen(["sleep", "60"])
    try:
        with tempfile.TemporaryDirectory() as workdir:
            args = [workdir, str(victim.pid)]
            proc = subprocess.run(
                [sys.executable, "-c", SCRIPT, *args],
                capture_output=True,
                text=True,
                timeout=60,
                env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(Path(__file__).parents[1])},
            )
            on_host = sum(f.stat().st_size for f in Path(workdir).iterdir())
        victim_alive = victim.poll() is None
    finally:
        victim.kill()
        victim.wait()
    assert proc.returncode == 0, proc.stderr
    return {**json.loads(proc.stdout), "on_host": on_host, "victim_alive": victim_alive}


def test_rlimits_hold_without_the_python_layer(confined):
    results = confined["results"]
    assert results["big_file"] == "OSError"  # EFBIG from RLIMIT_FSIZE
    assert results["memory"] == "MemoryError"
    assert results["fds"] == "OSError"  # EMFILE
    assert results["raise_memory"] == "ValueError"
    assert results["thread"] == "allowed"
    assert results["stderr_is_null"] is True  # not the fork server's log file any more


@pytest.mark.skipif(os.geteuid() != 0, reason="dropping privileges needs root")
def test_privileges_dropped_and_filesystem_hidden(confined):
    info, results = confined["info"], confined["results"]
    assert info["uid"] == info["gid"] >= 2_000_000_000 and info["chroot"]
    assert info["rlimits"]["RLIMIT_NPROC"] == 64
    assert results["proc_environ"] == "FileNotFoundError"
    assert results["write_tmp"] == "FileNotFoundError"
    assert results["setuid_root"] == "PermissionError"


@pytest.mark.skipif(os.geteuid() != 0, reason="the tmpfs needs root")
def test_total_disk_use_is_bounded(confined):
    info, results = confined["info"], confined["results"]
    assert info["disk_limit_mb"] == 4
    assert results["fill_disk"] == "OSError"  # ENOSPC after 4 MB in all
    assert confined["on_host"] == 0  # the tmpfs lived in the worker's mount namespace only


@pytest.mark.skipif(os.geteuid() != 0, reason="namespaces need root")
def test_network_namespace_is_empty(confined):
    assert confined["info"]["network_namespace"] is True


def test_seccomp_blocks_network_processes_and_signals(confined):
    if not confined["info"]["seccomp"]:
        pytest.skip(confined["info"]["seccomp_problem"])
    results = confined["results"]
    for name in ("socket", "fork", "exec", "subprocess", "kill_init", "kill_parent"):
        assert results[name] == "PermissionError", name
    for name in ("io_uring_setup", "sigqueue_victim", "pidfd_open_victim", "pidfd_send_signal"):
        assert results[name] == "Operation not permitted", name
    assert results["open_by_handle_at"] == "Operation not permitted"
    assert results["lower_nofile"] == "ValueError"  # no rlimit changes at all
    assert confined["victim_alive"]
