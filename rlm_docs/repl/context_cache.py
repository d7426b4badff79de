"""A start-up cache of the rendered corpus string, so a 50k-page worker starts in about a second.

Rendering 50k pages means building and joining ~150k Python strings and, for text with any
non-Latin-1 character, producing a 2-byte-per-char string: seconds per worker start (and per
restart). The cache stores the string's raw code units (1, 2 or 4 bytes each, CPython's own
layout); loading allocates an empty str of the right kind (`PyUnicode_New`, as CPython's own
string builders do) and reads the file straight into its buffer, with the GIL released and no
intermediate copy. Entries are keyed by the
store's table files (path, inode, size, mtime), which change whenever a store is rewritten
(stores are replaced atomically), and live in `home_dir()/sandbox`; the newest few are kept.
`RLM_DOCS_CONTEXT_CACHE=off` writes and reads none: a one-question process (`ask`) would leave
hundreds of megabytes for a large store that only a later process could use, so `ask` turns the
cache off unless the variable is set.
"""

import contextlib
import ctypes
import hashlib
import os
import struct
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from rlm_docs.atomic import atomic_write_bytes
from rlm_docs.resources import home_dir

ENV = "RLM_DOCS_CONTEXT_CACHE"
MIN_CHARS = 8_000_000
KEEP = 3
_MAGIC = b"RLMCTX2\0"
_HEADER = struct.Struct("<8sBBQ")  # magic, kind (bytes per char), is-ASCII flag, length
_MAXCHAR = {(1, True): 0x7F, (1, False): 0xFF, (2, False): 0xFFFF, (4, False): 0x10FFFF}

_unicode_new = ctypes.pythonapi.PyUnicode_New
_unicode_new.restype = ctypes.py_object
_unicode_new.argtypes = (ctypes.c_ssize_t, ctypes.c_uint32)


def cache_dir() -> Path | None:
    """Where entries live (`home_dir()/sandbox`), or None when RLM_DOCS_CONTEXT_CACHE=off."""
    if os.environ.get(ENV, "").strip().lower() == "off":
        return None
    return home_dir() / "sandbox"


def cache_key(store: Path) -> str:
    """Identity of a store's tables: changes whenever the store is rewritten."""
    parts = [str(store.resolve())]
    for name in ("documents.parquet", "pages.parquet"):
        st = (store / name).stat()
        parts.append(f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:24]


def _code_units(text: str) -> tuple[int, bytes]:
    """(kind, raw code units) matching CPython's compact representation of `text`."""
    if text.isascii():
        return 1, text.encode("ascii")
    try:
        return 1, text.encode("latin-1")
    except UnicodeEncodeError:
        pass
    data = text.encode("utf-16-le", "surrogatepass")
    if len(data) == 2 * len(text):  # no astral characters, so no surrogate pairs
        return 2, data
    return 4, text.encode("utf-32-le", "surrogatepass")


def _read(path: Path) -> str | None:
    """The cached string, or None if the file is missing or not a complete cache entry."""
    try:
        with open(path, "rb") as fh:
            magic, kind, is_ascii, length = _HEADER.unpack(fh.read(_HEADER.size))
            size = kind * length
            maxchar = _MAXCHAR.get((kind, bool(is_ascii)))
            if magic != _MAGIC or maxchar is None:
                return None
            if os.fstat(fh.fileno()).st_size != _HEADER.size + size:
                return None
            text = _unicode_new(length, maxchar)
            # The code units follow the str header: getsizeof = header + (length + 1) * kind.
            start = id(text) + sys.getsizeof(text) - (length + 1) * kind
            view = memoryview((ctypes.c_char * size).from_address(start)).cast("B")
            done = 0
            while done < size:
                got = fh.readinto(view[done:])
                if not got:
                    return None
                done += got
    except (OSError, struct.error):
        return None
    return text


def _prune(directory: Path) -> None:
    entries = sorted(directory.glob("context-*.bin"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in entries[KEEP:]:
        old.unlink(missing_ok=True)


class ContextLoader:
    """Reads the cached context of `store` in a background thread (reading and copying a few
    hundred MB is mostly memory-bound, so it overlaps well with importing and loading the
    corpus); `result(render)` returns it, or renders and saves it on a cache miss."""

    def __init__(self, store: Path, cache_dir: Path | None, min_chars: int = MIN_CHARS) -> None:
        self.min_chars = min_chars
        self.path: Path | None = None
        if cache_dir is not None:
            with contextlib.suppress(OSError):  # not a store: Corpus.load will say why
                self.path = cache_dir / f"context-{cache_key(store)}.bin"
        self._cached: str | None = None
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        if self.path is not None:
            self._cached = _read(self.path)

    def result(self, render: Callable[[], str]) -> str:
        self._thread.join()
        if self._cached is not None:
            assert self.path is not None
            with contextlib.suppress(OSError):
                os.utime(self.path)
            return self._cached
        text = render()
        if self.path is not None and len(text) >= self.min_chars:
            kind, data = _code_units(text)
            with contextlib.suppress(OSError):  # a read-only home only costs start-up time
                header = _HEADER.pack(_MAGIC, kind, text.isascii(), len(text))
                atomic_write_bytes(self.path, header + data)
                _prune(self.path.parent)
        return text
