"""rlm-docs: recursive language models over document collections.

Public names are imported lazily so `import rlm_docs` (and the CLI's start-up) stays fast.
"""

import sys
from importlib import import_module
from typing import Any

from rlm_docs.version import __version__

_EXPORTS = {
    "Corpus": "rlm_docs.corpus",
    "Hit": "rlm_docs.corpus",
    "RLM": "rlm_docs.engine",
    "Prediction": "rlm_docs.engine",
    "Budget": "rlm_docs.governor",
    "Governor": "rlm_docs.governor",
    "Ledger": "rlm_docs.governor",
    "BudgetExceeded": "rlm_docs.governor",
    "make_client": "rlm_docs.models",
    "Session": "rlm_docs.notebook",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'rlm_docs' has no attribute {name!r}")


def load_ipython_extension(ipython: Any) -> None:
    """`%load_ext rlm_docs`: register the %%rlm and %rlm_ask magics."""
    import_module("rlm_docs.notebook.magics").load_ipython_extension(ipython)


def _register_rich_views() -> None:
    """Inside a running IPython (a notebook or console), show corpora, hits, predictions,
    ledgers and cell results through the notebook's rich views. The core types know nothing of
    notebooks; this facade, like `load_ipython_extension`, wires the top layer in by name."""
    ipython = sys.modules.get("IPython")
    if ipython is not None and ipython.get_ipython() is not None:
        import_module("rlm_docs.notebook.display").register()


_register_rich_views()
