"""A corpus store sent to machines that cannot read the driver's copy.

`pack_store` makes one uncompressed tar of the store directory (the Parquet files inside are
already compressed); `unpack_store` extracts it once per machine into a directory named by the
archive's hash, so every worker on that machine, and later runs over the same store, reuse it.
"""

import hashlib
import io
import os
import shutil
import tarfile
import tempfile
from pathlib import Path

from rlm_docs.errors import CorpusError

_ROOT = "rlm-docs-shipped-stores"


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
    """Path of the unpacked store on this machine (extracted on first use, atomically)."""
    base = Path(root or tempfile.gettempdir()) / _ROOT
    target = base / hashlib.sha256(archive).hexdigest()[:32]
    if not target.is_dir():
        base.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(dir=base, prefix=".unpacking-"))
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(scratch, filter="data")
        try:
            os.rename(scratch / "store", target)
        except OSError:  # another worker on this machine finished first
            if not target.is_dir():
                raise
        shutil.rmtree(scratch, ignore_errors=True)
    return str(target)
