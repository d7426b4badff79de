"""Baseline prompt templates (`prompts/<name>.txt`), filled by plain replacement so the JSON
examples in them need no brace escaping."""

from functools import lru_cache

from rlm_docs.errors import ConfigError
from rlm_docs.resources import prompts_dir


@lru_cache(maxsize=8)
def _load(name: str) -> str:
    path = prompts_dir() / f"{name}.txt"
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        raise ConfigError(f"prompt template {path}: not found") from None


def fill(name: str, **values: object) -> str:
    """Template `name` with every `{key}` replaced by `str(value)`."""
    text = _load(name)
    for key, value in values.items():
        text = text.replace("{" + key + "}", str(value))
    return text
