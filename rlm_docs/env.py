"""Settings read from environment variables, blamed on the variable when they are wrong.

A bad `RLM_DOCS_MODEL`, `RLM_DOCS_SUB_MODEL`, `RLM_DOCS_PRICES` or `RLM_DOCS_CACHE` would
otherwise surface as an error about a model string or file the user never typed, set long ago
in a shell profile; the message starts with `VAR=value:` so the fix is obvious.
"""

import os
from collections.abc import Iterator
from contextlib import contextmanager

from rlm_docs.errors import ConfigError, RlmDocsError


def env_value(name: str) -> str | None:
    """The variable's value without surrounding spaces; None when unset or blank."""
    return os.environ.get(name, "").strip() or None


@contextmanager
def blame(name: str, value: str) -> Iterator[None]:
    """Re-raise a user error from using `value` as a ConfigError prefixed `NAME=value: `."""
    try:
        yield
    except RlmDocsError as exc:
        raise ConfigError(f"{name}={value}: {exc}") from None
