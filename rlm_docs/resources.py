"""Locations of the files shipped beside the code: prompt templates and the demo corpus.

In a source checkout (editable install) they live at the repository top level (`prompts/`,
`corpus/`); in a wheel they are copied into `rlm_docs/_bundled/`. User state (the demo store,
the response cache) goes under `RLM_DOCS_HOME` (default `~/.cache/rlm-docs`).
"""

import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _shipped(name: str) -> Path:
    bundled = _PACKAGE / "_bundled" / name
    return bundled if bundled.is_dir() else _PACKAGE.parent / name


def prompts_dir() -> Path:
    """Directory of prompt templates (`*.txt`)."""
    return _shipped("prompts")


def demo_corpus_dir() -> Path:
    """Directory of the bundled demo corpus sources and demo questions."""
    return _shipped("corpus")


def home_dir() -> Path:
    """Per-user state directory, overridable with RLM_DOCS_HOME."""
    return Path(os.environ.get("RLM_DOCS_HOME") or Path.home() / ".cache" / "rlm-docs")
