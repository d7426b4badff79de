"""The RLM engine: the root loop over a sandboxed REPL, answers with validated citations.

`RLM` is imported lazily so the light modules (parsing, prompts, prediction) load without
starting the sandbox machinery.
"""

from importlib import import_module
from typing import Any

from rlm_docs.engine.prediction import Prediction

__all__ = ["RLM", "Prediction"]


def __getattr__(name: str) -> Any:
    if name == "RLM":
        return import_module("rlm_docs.engine.rlm").RLM
    raise AttributeError(f"module 'rlm_docs.engine' has no attribute {name!r}")
