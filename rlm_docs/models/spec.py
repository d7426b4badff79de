"""Model strings such as `openai:gpt-5-mini`, `openai:qwen3@http://127.0.0.1:8000/v1`,
`mistral:mistral-large-latest`, `offline`, `human[:NAME]` (a person types the replies),
`scripted:FILE` and `py:package.module:factory` (a client of your own, `python_client`), parsed
in exactly one place."""

from dataclasses import dataclass

from rlm_docs.errors import ConfigError
from rlm_docs.models.python_client import python_target

BACKENDS = ("openai", "mistral", "offline", "scripted", "human", "py")


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model string; `base_url` is None unless given after `@`."""

    backend: str
    model: str
    base_url: str | None = None

    def __str__(self) -> str:
        if self.backend == "offline" or (self.backend, self.model) == ("human", "human"):
            return self.backend
        suffix = f"@{self.base_url}" if self.base_url else ""
        return f"{self.backend}:{self.model}{suffix}"


def parse_spec(text: str) -> ModelSpec:
    """Parse `backend:model[@base_url]` or bare `offline` / `human`; ConfigError names the bad
    string."""
    raw = (text or "").strip()
    if raw == "human":
        return ModelSpec("human", "human")
    if raw == "offline" or raw.startswith("offline:"):
        name = raw.partition(":")[2] or "offline"
        return ModelSpec("offline", name)
    backend, sep, rest = raw.partition(":")
    if not sep or backend not in BACKENDS:
        raise ConfigError(
            f"model {text!r}: expected BACKEND:MODEL[@BASE_URL] with BACKEND one of "
            f"{', '.join(BACKENDS)} (or just 'offline' or 'human')"
        )
    if backend == "scripted":
        if not rest:
            raise ConfigError(f"model {text!r}: scripted needs a file, e.g. scripted:replies.json")
        return ModelSpec("scripted", rest)
    if backend == "py":
        return ModelSpec("py", python_target(text, rest))
    model, at, base_url = rest.partition("@")
    if not model:
        raise ConfigError(f"model {text!r}: the model name after '{backend}:' is empty")
    if at and backend == "human":
        raise ConfigError(f"model {text!r}: a human has no base URL (use human or human:NAME)")
    if at and not base_url.startswith(("http://", "https://")):
        raise ConfigError(f"model {text!r}: base URL after '@' must start with http:// or https://")
    return ModelSpec(backend, model, base_url or None)
