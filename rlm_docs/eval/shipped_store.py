"""A corpus store sent to machines that cannot read the driver's copy.

`pack_store` makes one uncompressed tar of the store directory (the Parquet files inside are
already compressed); `unpack_store` extracts it once per machine into a directory named by the
archive's hash, so every worker on that machine, and later runs over the same store, reuse it.

Unpacked stores would pile up in the temp directory run after run, so each unpack also prunes:
a store is removed once it has not been used for `PRUNE_AFTER_S` and no process holds it. A
process that unpacks a store holds a shared `flock` on its lock file (`.locks/HASH`) until it
exits, and the pruner removes only what it can lock exclusively, so no running worker loses its
store. Lock files are never deleted: a waiter may hold one's old inode.

The temp directory is shared with every user of the machine, so nothing found there is trusted:
the stores live in a directory private to the user (`rlm-docs-shipped-stores-UID`, mode 0700,
its owner and mode checked on every unpack), lock files are opened without following links
(a planted `.locks/NAME` symlink would make a root process create a file wherever it points),
and a store found already unpacked is used only when every file of the archive is there with
the same content (a directory planted at the hash's name is refused, not loaded).
"""

import fcntl
import hashlib
import io
import os
import shutil
import stat
import tarfile
import tempfile
import time
from pathlib import Path

from rlm_docs.errors import CorpusError
from rlm_docs.private_dir import NotPrivate, private_dir

_ROOT = f"rlm-docs-shipped-stores-{os.getuid()}"  # one private directory per user
_LOCKS = ".locks"
_SCRATCH = ".unpacking-"
PRUNE_AFTER_S = 24 * 3600  # unused this long (and held by no process): removed
_HELD: dict[Path, int] = {}  # lock file -> this process's descriptor holding it shared
_CHUNK = 1 << 20


def pack_store(path: str | os.PathLike[str]) -> bytes:
    """The store directory at `path` as tar bytes (CorpusError if it is not a directory)."""
    store = Path(path)
    if not store.is_dir():
        raise CorpusError(f"{store}: corpus store not found (expected a directory)")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.add(store, arcname="store")
    return buffer.getvalue()


def unpack_store(archive: bytes, root: str | os.PathLike[str] | None = None) -> str:
    """Path of the unpacked store on this machine (extracted on first use, atomically), held
    by this process until it exits; stores unused for `PRUNE_AFTER_S` are pruned."""
    base = _private_dir(Path(root or tempfile.gettempdir()) / _ROOT)
    target = base / hashlib.sha256(archive).hexdigest()[:32]
    _hold(base, target.name)  # first: a pruner elsewhere cannot remove it from here on
    if os.path.lexists(target):
        _verify(archive, target)
    else:
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


def _private_dir(path: Path) -> Path:
    try:
        return private_dir(path)
    except NotPrivate as exc:
        raise CorpusError(f"{exc}; shipped stores are not unpacked there") from None


def _lock_fd(path: Path) -> int:
    """The lock file at `path`, opened (created 0600) without following a link."""
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)


def _hold(base: Path, name: str) -> None:
    locks = _private_dir(base / _LOCKS)
    path = locks / name
    if path not in _HELD:
        try:
            fd = _lock_fd(path)
        except OSError as exc:
            raise CorpusError(f"{path}: cannot open the store's lock file ({exc})") from None
        fcntl.flock(fd, fcntl.LOCK_SH)  # waits while a pruner is removing this store
        _HELD[path] = fd


def _verify(archive: bytes, target: Path) -> None:
    """CorpusError unless `target` is a real directory holding every file of `archive` with
    the same content (SHA-256), none of them reached through a link."""
    if not stat.S_ISDIR(os.lstat(target).st_mode):
        raise CorpusError(f"{target}: not a directory; the shipped store was not loaded")
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for member in tar:
            if not member.isfile():
                continue
            name = member.name.split("/", 1)[1]
            fh = tar.extractfile(member)
            want = hashlib.sha256()
            while fh is not None and (chunk := fh.read(_CHUNK)):
                want.update(chunk)
            if _digest(target, name) != want.digest():
                raise CorpusError(
                    f"{target}: {name} differs from the shipped store's; the directory was not "
                    "loaded (remove it to unpack the store again)"
                )


def _digest(root: Path, name: str) -> bytes | None:
    """SHA-256 of regular file `root/name`, opened without following links; None if absent."""
    fd = -1
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        for part in name.split("/"):
            nxt = os.open(part, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = nxt
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        digest = hashlib.sha256()
        while chunk := os.read(fd, _CHUNK):
            digest.update(chunk)
        return digest.digest()
    except OSError:
        return None
    finally:
        if fd >= 0:
            os.close(fd)


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
        try:
            fd = _lock_fd(base / _LOCKS / entry.name)
        except OSError:  # not a lock file (a link someone planted): leave the entry alone
            continue
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
