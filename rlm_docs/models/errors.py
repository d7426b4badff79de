"""Typed model-call failures, so callers can react (shorten the prompt, fix the key) not crash.

Messages name the model spec but never the API key.
"""

import re

from rlm_docs.errors import ModelError


class AuthError(ModelError):
    """401/403: the key is missing, wrong or lacks access to the model."""


class BadRequestError(ModelError):
    """400-class refusal that retrying cannot fix."""


class ContextLengthError(BadRequestError):
    """The prompt does not fit the model's context window.

    `prompt_tokens` and `limit` are parsed from the provider message when it states them, so the
    root model can be told how much to cut.
    """

    def __init__(self, spec: str, detail: str) -> None:
        self.spec = spec
        self.detail = detail
        self.prompt_tokens, self.limit = parse_context_numbers(detail)
        if self.prompt_tokens is not None and self.limit is not None:
            over = self.prompt_tokens - self.limit
            msg = (
                f"{spec}: prompt too long: {self.prompt_tokens:,} tokens > limit "
                f"{self.limit:,} (over by {over:,}); shorten the prompt"
            )
        else:
            msg = f"{spec}: prompt too long for the model's context window: {detail}"
        super().__init__(msg)

    def __reduce__(self) -> tuple:
        return (type(self), (self.spec, self.detail))


class ModelUnavailableError(ModelError):
    """Transient failures (429, 5xx, timeouts, garbage responses) persisted past all retries."""


_LIMIT_PATTERNS = (
    r"maximum context length is (\d[\d,]*)",
    r"model with (\d[\d,]*) maximum context length",
    r"context (?:length|window) (?:of|is) (\d[\d,]*)",
)
_PROMPT_PATTERNS = (
    r"resulted in (\d[\d,]*) tokens",
    r"you requested (\d[\d,]*) tokens",
    r"prompt contains (\d[\d,]*) tokens",
    r"prompt (?:has|is) (\d[\d,]*) tokens",
)


def _first_int(patterns: tuple[str, ...], text: str) -> int | None:
    for pattern in patterns:
        m = re.search(pattern, text, flags=re.IGNORECASE)
        if m:
            return int(m.group(1).replace(",", ""))
    return None


def parse_context_numbers(detail: str) -> tuple[int | None, int | None]:
    """(prompt_tokens, limit) from an OpenAI/Mistral/vLLM context-length message, if stated."""
    return _first_int(_PROMPT_PATTERNS, detail), _first_int(_LIMIT_PATTERNS, detail)


def is_context_length_message(code: str | None, detail: str) -> bool:
    """True for OpenAI's `context_length_exceeded` code and the providers' wording of it."""
    if code in ("context_length_exceeded", "3051"):
        return True
    low = detail.lower()
    return "context length" in low or "context window" in low or "too large for model" in low
