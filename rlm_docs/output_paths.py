"""Output locations checked before any work starts.

A run that takes minutes (an `ask` with a real model, an `eval`, a big `ingest`) must not end
by losing its result because the output path is a file, sits under a file, or cannot be created
(`/proc/nope`, a read-only mount). Every command checks its outputs here first, and the checks
leave nothing behind: a missing directory is created to prove it can be, then removed again, so
a failed validation never leaves a half-made run or store directory (the command creates it
for real once the rest of its input is valid).
"""

import contextlib
import os
import random
import stat
import tempfile
import time
from pathlib import Path

from rlm_docs.errors import ConfigError
from rlm_docs.resources import home_dir


def _nearest_existing(path: Path) -> tuple[Path, list[Path]]:
    """The closest existing ancestor of `path` (or itself) and the missing ones below it."""
    missing: list[Path] = []
    current = path
    while not os.path.lexists(current):
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    return current, missing


def _check_dir(target: Path, label: str) -> None:
    """Prove that `target` can hold new files (ConfigError starting with `label` if not).

    Another process may check the same missing directory at the same time (two `eval`s on a
    fresh RLM_DOCS_HOME) and make or remove a directory under this check: a missing or
    existing entry is then tried again, and only a refusal that persists is reported (a file
    system that refuses new entries, such as `/proc/nope`, refuses every time)."""
    for attempt in range(_ATTEMPTS):
        try:
            _probe_dir(target, label)
            return
        except (FileNotFoundError, FileExistsError) as exc:
            if attempt == _ATTEMPTS - 1:
                reason = exc.strerror or type(exc).__name__
                raise ConfigError(f"{label}: cannot write in {target} ({reason})") from None
            time.sleep(random.uniform(0, 0.005 * (attempt + 1)))


_ATTEMPTS = 8


def _probe_dir(target: Path, label: str) -> None:
    """One try of `_check_dir`; FileNotFoundError / FileExistsError when an entry on the way
    was missing or already there (possibly a concurrent check), ConfigError otherwise."""
    existing, missing = _nearest_existing(target)
    if not stat.S_ISDIR(os.stat(existing).st_mode):  # one look: FileNotFoundError if removed
        raise ConfigError(f"{label}: {existing} is a file, not a directory")
    created: list[Path] = []
    try:
        for directory in reversed(missing):
            directory.mkdir()
            created.append(directory)
        fd, probe = tempfile.mkstemp(dir=target, prefix=".rlm-docs-probe-")
        os.close(fd)
        os.unlink(probe)
    except (FileNotFoundError, FileExistsError):
        raise
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ConfigError(f"{label}: cannot write in {target} ({reason})") from None
    finally:
        for directory in reversed(created):
            with contextlib.suppress(OSError):
                directory.rmdir()


def check_output_dir(path: str | os.PathLike, what: str) -> Path:
    """`path` as a directory to write into: an existing writable one, or one that can be
    created. The ConfigError reads `WHAT PATH: reason`."""
    target = Path(path)
    _check_dir(target, f"{what} {target}")
    return target


def check_output_file(path: str | os.PathLike, what: str) -> Path:
    """`path` as a file that can be (re)written: not a directory, in a writable directory."""
    target = Path(path)
    if target.is_dir():
        raise ConfigError(f"{what} {target}: is a directory; give a file name")
    _check_dir(target.parent, f"{what} {target}")
    return target


def check_home() -> Path:
    """`home_dir()` (RLM_DOCS_HOME) as a usable state directory, named in the error if not."""
    home = home_dir()
    _check_dir(home, f"RLM_DOCS_HOME={home}")
    return home
