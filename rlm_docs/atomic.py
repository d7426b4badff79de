"""Atomic file and directory writes: a crash or a bad input never leaves half-written output."""

import os
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
    either the old store or the new one, never a mix.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"))
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
