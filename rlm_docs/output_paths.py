"""Output locations checked before any work starts.

A run that takes minutes (an `ask` with a real model, an `eval`, a big `ingest`) must not end
by losing its result because the output path is a file, sits under a file, or cannot be created
(`/proc/nope`, a read-only mount). Every command checks its outputs here first, and the checks
leave nothing behind: a missing directory is proved creatable without being created, so a
failed validation never leaves a half-made run or store directory (the command creates it for
real once the rest of its input is valid).
"""

import os
import stat
import tempfile
from pathlib import Path

from rlm_docs.errors import ConfigError
from rlm_docs.resources import home_dir


def _nearest_existing(path: Path) -> Path:
    """The closest existing ancestor of `path`, or `path` itself when it exists."""
    current = path
    while not os.path.lexists(current) and current.parent != current:
        current = current.parent
    return current


def _check_dir(target: Path, label: str) -> None:
    """Prove that `target` can hold new files (ConfigError starting with `label` if not).

    The proof is a uniquely named directory made and removed in the closest existing ancestor
    of `target`: if a directory can be made there, the missing ones down to `target` can be
    too. No shared name is ever created, so any number of processes may check the same missing
    directory at once (two `eval`s on a fresh RLM_DOCS_HOME) without colliding. Only an
    ancestor that vanishes while being probed sends the check back to look again; a refusal
    from a directory that still exists (`/proc/nope`, a read-only mount) is the error."""
    while True:
        existing = _nearest_existing(target)
        try:
            if not stat.S_ISDIR(os.stat(existing).st_mode):
                raise ConfigError(f"{label}: {existing} is a file, not a directory")
            os.rmdir(tempfile.mkdtemp(dir=existing, prefix=".rlm-docs-probe-"))
            return
        except FileNotFoundError as exc:
            if not os.path.lexists(existing):
                continue  # removed under us: look for the closest existing ancestor again
            reason = exc.strerror or type(exc).__name__
            raise ConfigError(f"{label}: cannot write in {target} ({reason})") from None
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            raise ConfigError(f"{label}: cannot write in {target} ({reason})") from None


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
