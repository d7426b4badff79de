"""The OS layer: confine the worker process after it has imported and loaded everything.

Order matters. As root: the worker moves into fresh mount and network namespaces (no network
interface but a downed loopback; the mounts below are invisible to the host), mounts a
size-limited tmpfs on its work directory (bounding the total bytes it can write), chroots there
and becomes a uid of its own (`worker_uid`: no other process shares it, so signals, /proc and
RLIMIT_NPROC never reach or count other sandboxes). Then rlimits are set, then the seccomp filter
is installed (it also forbids undoing the above, except moving the RLIMIT_CPU soft limit, which
the worker does before each request; the host does not trust it and also watches the worker's
CPU time, see `process_cpu_s`). Each step is reported so `Sandbox.security()`
can show which layers are really active on this machine.

seccomp policy (default allow, EPERM for): sockets and networking, io_uring (it performs
socket/connect without those syscalls), execve/execveat, fork/vfork, clone without CLONE_THREAD
(threads stay allowed because numpy/pyarrow/bm25s may start them; clone3 answers ENOSYS so glibc
falls back to the filtered clone), ptrace, process_vm_*, mount APIs, namespaces, kernel modules,
keyrings, bpf, perf, file handles, any signal aimed at another pid (kill/tkill/tgkill, the
sigqueue calls, pidfds) and changing any rlimit but RLIMIT_CPU.
"""

import ctypes
import errno
import math
import os
import resource
import signal
from pathlib import Path
from typing import Any

from sandbox.errors import ConfigError

try:  # imported now: after privileges are dropped the library directories may be unreadable
    import pyseccomp as seccomp

    _SECCOMP_PROBLEM = None
except (ImportError, RuntimeError, OSError) as exc:
    seccomp = None
    _SECCOMP_PROBLEM = f"libseccomp unavailable: {exc}"

# Worker uids are WORKER_UID_BASE + pid: unique among live processes, far above real accounts.
WORKER_UID_BASE = 2_000_000_000
_CLONE_THREAD = 0x00010000
_CLONE_NEWNS = 0x00020000
_CLONE_NEWNET = 0x40000000
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 0x2, 0x4, 0x8
_MS_REC, _MS_PRIVATE = 0x4000, 0x40000
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
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "rt_sigqueueinfo",
    "rt_tgsigqueueinfo",
    "pidfd_open",
    "pidfd_send_signal",
    "pidfd_getfd",
    "name_to_handle_at",
    "open_by_handle_at",
    "process_madvise",
    "kcmp",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "quotactl",
    "acct",
    "syslog",
    "iopl",
    "ioperm",
)


_LIBC = ctypes.CDLL(None, use_errno=True)


def _prctl(option: int, value: int) -> None:
    _LIBC.prctl(option, value, 0, 0, 0)


def _libc_call(name: str, *args: Any) -> None:
    if getattr(_LIBC, name)(*args) != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{name}: {os.strerror(code)}")


def worker_uid(pid: int) -> int:
    """The uid a confined worker with this pid runs as (when the host is root)."""
    return WORKER_UID_BASE + pid


HEADROOM_MB = 256


def check_memory(memory_mb: int) -> int:
    """Refuse an address-space limit the already loaded corpus would not fit in; the least
    limit that fits (what the worker maps now, plus HEADROOM_MB)."""
    pages = int(Path("/proc/self/statm").read_text().split()[0])
    used_mb = pages * os.sysconf("SC_PAGE_SIZE") // 2**20
    if memory_mb < used_mb + HEADROOM_MB:
        raise ConfigError(
            f"Limits.memory_mb={memory_mb} is too small: the worker already maps {used_mb} MB "
            f"(interpreter and corpus); use at least {used_mb + HEADROOM_MB}"
        )
    return used_mb + HEADROOM_MB


_RLIMITS = 16  # RLIM_NLIMITS on Linux: resource numbers are 0..15
OOM_SCORE_ADJ = 1000  # the highest: the kernel kills a worker before anything else


def prefer_oom_kill() -> int | None:
    """Make this worker the OOM killer's first choice (raising one's own score needs no
    privilege); the score set, or None when /proc refuses. Before the chroot hides /proc."""
    try:
        Path("/proc/self/oom_score_adj").write_text(str(OOM_SCORE_ADJ))
    except OSError:
        return None
    return OOM_SCORE_ADJ


def isolate(workdir: str, disk_mb: int, uid: int) -> dict[str, Any]:
    """As root: new mount + network namespaces and a `disk_mb` tmpfs on `workdir`. Each part
    that the kernel (or a container) refuses is reported instead of failing the worker."""
    report: dict[str, Any] = {"network_namespace": False, "disk_limit_mb": None}
    try:
        _libc_call("unshare", _CLONE_NEWNS | _CLONE_NEWNET)
        report["network_namespace"] = True
    except OSError as exc:
        report["namespace_problem"] = str(exc)
        return report
    try:
        _libc_call("mount", None, b"/", None, _MS_REC | _MS_PRIVATE, None)
        options = f"size={disk_mb}m,mode=0700,uid={uid},gid={uid}".encode()
        flags = _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
        _libc_call("mount", b"tmpfs", os.fsencode(workdir), b"tmpfs", flags, options)
        report["disk_limit_mb"] = disk_mb
    except OSError as exc:
        report["disk_problem"] = str(exc)
    return report


def drop_privileges(workdir: str, uid: int) -> bool:
    """When started as root: chroot into the empty `workdir` (the rest of the file system,
    /proc included, disappears), then become `uid` with no groups. True if done."""
    if os.geteuid() != 0:
        os.chdir(workdir)
        return False
    os.chroot(workdir)
    os.chdir("/")
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    return True


def set_rlimits(
    memory_mb: int, open_files: int, file_mb: int, processes: int, dropped: bool
) -> dict[str, Any]:
    """Address space, open files, file size, core size and (as the worker uid) process count."""
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

    Called before every request. Only the soft limit moves: raising a hard limit again would
    need CAP_SYS_RESOURCE, which containers often withhold even from root, and another uid may
    not prlimit the worker at all. A worker that raises its own soft limit is stopped by the
    host, which checks `process_cpu_s` while it waits for a reply and between requests.
    """
    usage = resource.getrusage(resource.RUSAGE_SELF)
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    soft = math.ceil(usage.ru_utime + usage.ru_stime + cpu_s)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def lower_memory(memory_mb: int) -> None:
    """Lower the address-space limit to `memory_mb` (this host's workers share a cap:
    `memory_share`); a higher value changes nothing, and raising is impossible anyway (the
    hard limit moves with it, and raising a hard limit needs a capability the worker lacks)."""
    value = memory_mb * 2**20
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    if hard == resource.RLIM_INFINITY or value < hard:
        resource.setrlimit(resource.RLIMIT_AS, (value, value))


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def process_cpu_s(pid: int) -> float:
    """CPU seconds (user + system, all threads) used so far by process `pid`."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        return _stat_cpu_s(f.read())


def open_stat(pid: int) -> int:
    """A descriptor of `/proc/<pid>/stat` for `stat_cpu_s`: the host reads a worker's CPU time
    twice per request, and one `pread` on a held descriptor costs a fraction of an open, read
    and close (it also keeps naming that process, never a later one given the same pid)."""
    return os.open(f"/proc/{pid}/stat", os.O_RDONLY | os.O_CLOEXEC)


def stat_cpu_s(stat_fd: int) -> float:
    """CPU seconds used so far by the process whose stat file `stat_fd` is (`open_stat`);
    OSError once the process is gone."""
    return _stat_cpu_s(os.pread(stat_fd, 4096, 0))


def _stat_cpu_s(stat: bytes) -> float:
    fields = stat.rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS


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
    # Only the cell's CPU limit and the address space (lowered to the memory share) may be set.
    movable = (resource.RLIMIT_CPU, resource.RLIMIT_AS)
    flt.add_rule(deny, "prlimit64", seccomp.Arg(0, seccomp.NE, 0))
    for which in [*(r for r in range(_RLIMITS) if r not in movable)]:
        flt.add_rule(deny, "setrlimit", seccomp.Arg(0, seccomp.EQ, which))
        flt.add_rule(
            deny, "prlimit64", seccomp.Arg(1, seccomp.EQ, which), seccomp.Arg(2, seccomp.NE, 0)
        )
    flt.add_rule(deny, "setrlimit", seccomp.Arg(0, seccomp.GE, _RLIMITS))
    flt.add_rule(
        deny, "prlimit64", seccomp.Arg(1, seccomp.GE, _RLIMITS), seccomp.Arg(2, seccomp.NE, 0)
    )
    flt.add_rule(deny, "kill", seccomp.Arg(0, seccomp.NE, pid))
    flt.add_rule(deny, "tkill", seccomp.Arg(0, seccomp.NE, pid))
    flt.add_rule(deny, "tgkill", seccomp.Arg(0, seccomp.NE, pid))
    flt.load()
    return None


def _quiet_stdio() -> None:
    """Inherited stdio (the fork server's log file) is replaced by /dev/null: nothing to write to."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)


def confine(
    workdir: str,
    memory_mb: int,
    open_files: int,
    file_mb: int,
    processes: int,
    disk_mb: int,
    share_mb: int | None = None,
) -> dict[str, Any]:
    """Apply every OS layer in order and describe what is active. The address space is
    `memory_mb`, or the host's `share_mb` for this worker (`memory_share`) raised to what the
    loaded worker needs, never above `memory_mb`."""
    needed = check_memory(memory_mb)
    if share_mb is not None:
        memory_mb = min(memory_mb, max(share_mb, needed))
    oom_score_adj = prefer_oom_kill()
    _quiet_stdio()
    uid = worker_uid(os.getpid())
    root = os.geteuid() == 0
    if root:
        os.chown(workdir, uid, uid)  # also the fallback if the tmpfs cannot be mounted
    isolation = isolate(workdir, disk_mb, uid) if root else {"network_namespace": False}
    dropped = drop_privileges(workdir, uid)
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)  # after setuid, which clears it
    _prctl(_PR_SET_DUMPABLE, 0)
    rlimits = set_rlimits(memory_mb, open_files, file_mb, processes, dropped)
    problem = install_seccomp()
    return {
        "uid": os.getuid(),
        "gid": os.getgid(),
        "privileges_dropped": dropped,
        "chroot": workdir if dropped else None,
        **isolation,
        "rlimits": rlimits,
        "memory_needed_mb": needed,
        "oom_score_adj": oom_score_adj,
        "seccomp": problem is None,
        "seccomp_problem": problem,
        "cwd": os.getcwd(),
        "restricted_python": True,
    }
