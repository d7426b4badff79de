"""Atomic file and directory writes: a crash or a bad input never leaves half-written output."""

import glob
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _read_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# Read once at import: os.umask is process-wide, so toggling it later would race other threads.
_UMASK = _read_umask()


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write `data` to a temp file beside `path`, fsync it, then rename over `path`.

    The file gets the permissions a plain `open(path, "w")` would give (mkstemp's are 0600).
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """UTF-8 text variant of `atomic_write_bytes`."""
    atomic_write_bytes(path, text.encode("utf-8"))


@contextmanager
def atomic_directory(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temp directory that replaces `path` only if the block succeeds.

    An existing directory at `path` is swapped out and removed after the rename, so readers see
    either the old store or the new one, never a mix. The temp directory's name holds the
    writer's pid (`.NAME.PID.XXXX.tmp`): a writer killed before it could clean up (SIGKILL, a
    power cut) leaves it behind, and the next write to `path` removes it once that pid is gone.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_orphans(target)
    tmp = Path(
        tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.{os.getpid()}.", suffix=".tmp")
    )
    tmp.chmod(0o777 & ~_UMASK)
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old = None
    if target.exists():
        old = target.with_name(f".{target.name}.old-{os.getpid()}")
        os.replace(target, old)
    os.replace(tmp, target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _remove_orphans(target: Path) -> None:
    """Remove the temp and swapped-out directories of earlier writes to `target` whose writer
    process no longer exists (a live writer's are left alone)."""
    pattern = re.compile(rf"\.{re.escape(target.name)}\.(?:(\d+)\.\w+\.tmp|old-(\d+))")
    for leftover in target.parent.glob(f".{glob.escape(target.name)}.*"):
        match = pattern.fullmatch(leftover.name)
        pid = match and (match.group(1) or match.group(2))
        if pid and not _alive(int(pid)) and leftover.is_dir():
            shutil.rmtree(leftover, ignore_errors=True)
