"""Prompt templates (`prompts/<name>.txt`) filled by name: one loader for the root, extract,
baseline and judge prompts.

Templates are plain text with `{name}` placeholders; only the names given are replaced, in one
pass, so JSON examples in a template need no brace escaping and a value (a question, a page of a
document) that itself contains `{question}` is never substituted again.
"""

import re
from functools import cache
from typing import Any

from rlm_docs.errors import ConfigError
from rlm_docs.resources import prompts_dir

_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


@cache
def load_template(name: str) -> str:
    """Text of `prompts/<name>.txt` (ConfigError naming the file if missing)."""
    path = prompts_dir() / f"{name}.txt"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in prompts_dir().glob("*.txt")))
        raise ConfigError(f"prompt template {path} not found (known: {known})")
    return path.read_text(encoding="utf-8")


def fill(template: str, **values: Any) -> str:
    """Replace `{name}` for the given names only, in one pass (values are not re-scanned)."""
    return _PLACEHOLDER.sub(
        lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0), template
    )


def render(name: str, **values: Any) -> str:
    """Template `name` filled with `values`."""
    return fill(load_template(name), **values)
