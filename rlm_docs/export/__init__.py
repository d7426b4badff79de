"""`export_run`: an eval run directory in another tool's format.

Formats register here by name, each a module exposing `export(run_dir, out) -> Path` and
`SUFFIX` (the file name ending `--out` should have), and `DIRECTORY = True` when `--out` is a
directory of files; a format's own dependencies are imported only when it is used, so a missing
extra stops that format alone with one line.
"""

import importlib
from pathlib import Path

from rlm_docs.errors import ConfigError

FORMATS: dict[str, str] = {
    "inspect": "rlm_docs.export.inspect_log",
    "rlms": "rlm_docs.export.rlms_logs",
}


def writes_directory(fmt: str) -> bool:
    """Whether format `fmt` writes a directory of files at `--out` (else one file)."""
    module = FORMATS.get(fmt)
    return module is not None and bool(getattr(importlib.import_module(module), "DIRECTORY", False))


def export_run(run_dir: str | Path, fmt: str, out: str | Path) -> Path:
    """Write the run at `run_dir` as `fmt` to `out`; returns the path written."""
    module = FORMATS.get(fmt)
    if module is None:
        raise ConfigError(f"unknown format {fmt!r}; choose from {', '.join(FORMATS)}")
    return importlib.import_module(module).export(Path(run_dir), Path(out))


__all__ = ["FORMATS", "export_run", "writes_directory"]
