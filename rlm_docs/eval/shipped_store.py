"""A corpus store sent to machines that cannot read the driver's copy.

`pack_store` makes one uncompressed tar of the store directory (the Parquet files inside are
already compressed); `unpack_store` extracts it once per machine into a directory named by the
archive's hash, so every worker on that machine, and later runs over the same store, reuse it.

Unpacked stores would pile up in the temp directory run after run, so each unpack also prunes:
a store is removed once it has not been used for `PRUNE_AFTER_S` and no process holds it. A
process that unpacks a store holds a shared `flock` on its lock file (`.locks/HASH`) until it
exits, and the pruner removes only what it can lock exclusively, so no running worker loses its
store. Lock files are never deleted: a waiter may hold one's old inode.
"""

import fcntl
import hashlib
import io
import os
import shutil
import tarfile
import tempfile
import time
from pathlib import Path

from rlm_docs.errors import CorpusError

_ROOT = "rlm-docs-shipped-stores"
_LOCKS = ".locks"
_SCRATCH = ".unpacking-"
PRUNE_AFTER_S = 24 * 3600  # unused this long (and held by no process): removed
_HELD: dict[Path, int] = {}  # lock file -> this process's descriptor holding it shared


def pack_store(path: str | os.PathLike) -> bytes:
    """The store directory at `path` as tar bytes (CorpusError if it is not a directory)."""
    store = Path(path)
    if not store.is_dir():
        raise CorpusError(f"{store}: corpus store not found (expected a directory)")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.add(store, arcname="store")
    return buffer.getvalue()


def unpack_store(archive: bytes, root: str | os.PathLike | None = None) -> str:
    """Path of the unpacked store on this machine (extracted on first use, atomically), held
    by this process until it exits; stores unused for `PRUNE_AFTER_S` are pruned."""
    base = Path(root or tempfile.gettempdir()) / _ROOT
    target = base / hashlib.sha256(archive).hexdigest()[:32]
    base.mkdir(parents=True, exist_ok=True)
    _hold(base, target.name)  # first: a pruner elsewhere cannot remove it from here on
    if not target.is_dir():
        scratch = Path(tempfile.mkdtemp(dir=base, prefix=_SCRATCH))
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(scratch, filter="data")
        try:
            os.rename(scratch / "store", target)
        except OSError:  # another worker on this machine finished first
            if not target.is_dir():
                raise
        shutil.rmtree(scratch, ignore_errors=True)
    os.utime(target)  # last used now
    prune_stores(base)
    return str(target)


def _hold(base: Path, name: str) -> None:
    locks = base / _LOCKS
    locks.mkdir(exist_ok=True)
    path = locks / name
    if path not in _HELD:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_SH)  # waits while a pruner is removing this store
        _HELD[path] = fd


def prune_stores(base: Path, older_than_s: float = PRUNE_AFTER_S) -> list[str]:
    """Remove the stores under `base` unused for `older_than_s` that no process holds, and
    unpacking scratch that old (left by a crash); the names removed."""
    removed = []
    now = time.time()
    for entry in sorted(base.iterdir()):
        try:
            if entry.name == _LOCKS or now - entry.stat().st_mtime < older_than_s:
                continue
        except FileNotFoundError:  # another pruner was first
            continue
        if entry.name.startswith(_SCRATCH):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry.name)
            continue
        fd = os.open(base / _LOCKS / entry.name, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # a process on this machine still uses it
            os.close(fd)
            continue
        try:
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry.name)
        finally:
            os.close(fd)
    return removed
