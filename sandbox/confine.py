"""The OS layer: confine the worker process after it has imported and loaded everything.

Order matters: privileges are dropped (root -> nobody) first, then rlimits are set, then the
seccomp filter is installed (it also forbids undoing the above). Each step is reported so
`Sandbox.security()` can show which layers are really active on this machine.

seccomp policy (default allow, EPERM for): sockets and networking, execve/execveat, fork/vfork,
clone without CLONE_THREAD (threads stay allowed because numpy/pyarrow/bm25s may start them;
clone3 answers ENOSYS so glibc falls back to the filtered clone), ptrace, process_vm_*, mount,
namespaces, kernel modules, keyrings, bpf, perf, and kill/tkill/tgkill aimed at another pid.
"""

import ctypes
import errno
import math
import os
import resource
import signal
from pathlib import Path
from typing import Any

from rlm_docs.errors import ConfigError

try:  # imported now: after privileges are dropped the library directories may be unreadable
    import pyseccomp as seccomp

    _SECCOMP_PROBLEM = None
except (ImportError, RuntimeError, OSError) as exc:
    seccomp = None
    _SECCOMP_PROBLEM = f"libseccomp unavailable: {exc}"

NOBODY = 65534
_CLONE_THREAD = 0x00010000
_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4

_DENIED_SYSCALLS = (
    "socket",
    "socketpair",
    "connect",
    "bind",
    "listen",
    "accept",
    "accept4",
    "execve",
    "execveat",
    "fork",
    "vfork",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "unshare",
    "setns",
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "reboot",
    "swapon",
    "swapoff",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "setuid",
    "setgid",
    "setreuid",
    "setregid",
    "setresuid",
    "setresgid",
    "setgroups",
    "personality",
)


def _prctl(option: int, value: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(option, value, 0, 0, 0)


HEADROOM_MB = 256


def check_memory(memory_mb: int) -> None:
    """Refuse an address-space limit the already loaded corpus would not fit in."""
    pages = int(Path("/proc/self/statm").read_text().split()[0])
    used_mb = pages * os.sysconf("SC_PAGE_SIZE") // 2**20
    if memory_mb < used_mb + HEADROOM_MB:
        raise ConfigError(
            f"Limits.memory_mb={memory_mb} is too small: the worker already maps {used_mb} MB "
            f"(interpreter and corpus); use at least {used_mb + HEADROOM_MB}"
        )


def drop_privileges(workdir: str) -> bool:
    """When started as root: chroot into the empty `workdir` (the rest of the file system,
    /proc included, disappears), then become `nobody` with no groups. True if done."""
    if os.geteuid() != 0:
        os.chdir(workdir)
        return False
    os.chroot(workdir)
    os.chdir("/")
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)
    return True


def set_rlimits(
    memory_mb: int, open_files: int, file_mb: int, processes: int, dropped: bool
) -> dict:
    """Address space, open files, file size, core size and (as nobody) process count limits."""
    limits = {
        "RLIMIT_AS": memory_mb * 1024 * 1024,
        "RLIMIT_NOFILE": open_files,
        "RLIMIT_FSIZE": file_mb * 1024 * 1024,
        "RLIMIT_CORE": 0,
    }
    if dropped:
        limits["RLIMIT_NPROC"] = processes
    for name, value in limits.items():
        which = getattr(resource, name)
        hard = resource.getrlimit(which)[1]
        capped = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (capped, capped))
    return limits


def set_cell_cpu_limit(cpu_s: int) -> None:
    """Allow `cpu_s` more CPU seconds from now (then the kernel's SIGXCPU kills the worker).

    Called before every request. Only the soft limit moves, which an unprivileged process may
    do; seccomp still lets the worker change RLIMIT_CPU and nothing else.
    """
    usage = resource.getrusage(resource.RUSAGE_SELF)
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    soft = math.ceil(usage.ru_utime + usage.ru_stime + cpu_s)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def install_seccomp() -> str | None:
    """Load the syscall filter; returns None on success or the reason it is unavailable."""
    if seccomp is None:
        return _SECCOMP_PROBLEM
    deny = seccomp.ERRNO(errno.EPERM)
    pid = os.getpid()
    flt = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    flt.set_attr(seccomp.Attr.CTL_TSYNC, 1)
    for name in _DENIED_SYSCALLS:
        flt.add_rule(deny, name)
    flt.add_rule(deny, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, _CLONE_THREAD, 0))
    flt.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    cpu = resource.RLIMIT_CPU
    flt.add_rule(deny, "setrlimit", seccomp.Arg(0, seccomp.NE, cpu))
    flt.add_rule(deny, "prlimit64", seccomp.Arg(0, seccomp.NE, 0))
    flt.add_rule(deny, "prlimit64", seccomp.Arg(1, seccomp.NE, cpu), seccomp.Arg(2, seccomp.NE, 0))
    flt.add_rule(deny, "kill", seccomp.Arg(0, seccomp.NE, pid))
    flt.add_rule(deny, "tkill", seccomp.Arg(0, seccomp.NE, pid))
    flt.add_rule(deny, "tgkill", seccomp.Arg(0, seccomp.NE, pid))
    flt.load()
    return None


def confine(
    workdir: str, memory_mb: int, open_files: int, file_mb: int, processes: int
) -> dict[str, Any]:
    """Apply every OS layer in order and describe what is active."""
    check_memory(memory_mb)
    dropped = drop_privileges(workdir)
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)  # after setuid, which clears it
    _prctl(_PR_SET_DUMPABLE, 0)
    rlimits = set_rlimits(memory_mb, open_files, file_mb, processes, dropped)
    problem = install_seccomp()
    return {
        "uid": os.getuid(),
        "gid": os.getgid(),
        "privileges_dropped": dropped,
        "chroot": workdir if dropped else None,
        "rlimits": rlimits,
        "seccomp": problem is None,
        "seccomp_problem": problem,
        "cwd": os.getcwd(),
        "restricted_python": True,
    }
