"""What the OpenAI and Mistral backends share: key lookup, error classification, accounting.

The SDKs differ in their exception classes, but the decision is the same: 429/5xx/408/timeouts
and garbage bodies are retried; 401/403 become `AuthError`; context-length refusals become
`ContextLengthError`; other 4xx become `BadRequestError`. Provider messages are scrubbed of the
API key, and auth failures never echo the provider's text (it can contain a masked key). The
key goes only where `endpoints` allows.
"""

import json
import os
import time
from collections.abc import Mapping
from typing import Any

from rlm_docs.errors import ConfigError
from rlm_docs.models.base import Completion, Usage, UsageSource
from rlm_docs.models.endpoints import is_official, key_may_go, withheld_note
from rlm_docs.models.errors import (
    AuthError,
    BadRequestError,
    ContextLengthError,
    is_context_length_message,
)
from rlm_docs.models.prices import Price
from rlm_docs.models.retry import TransientError, retry_after_seconds
from rlm_docs.tokens import count_message_tokens, count_tokens

_RETRY_STATUSES = {408, 409, 425, 429}


NO_KEY = "no-key"  # what a server gets instead of the key; local servers (vLLM, Ollama) ignore it


def resolve_key(env_var: str, spec: str, backend: str, base_url: str | None) -> tuple[str, str]:
    """(the key to send, what to say when the server refuses it): the key from `env_var` when
    it may go to `base_url` (`endpoints.key_may_go`), else `NO_KEY`; a missing key is an error
    only for the provider's own endpoint."""
    if not key_may_go(backend, base_url):
        return NO_KEY, withheld_note(backend, base_url or "")
    key = os.environ.get(env_var, "").strip()
    if key:
        return key, f"check {env_var}"
    if not is_official(backend, base_url):
        return NO_KEY, f"{env_var} is not set"
    raise ConfigError(
        f"model {spec}: {env_var} is not set; export it, or use a local server with "
        f"BACKEND:MODEL@http://HOST:PORT/v1"
    )


def scrub(text: str, key: str) -> str:
    """`text` with every occurrence of the key replaced."""
    return text.replace(key, "***") if key and key != NO_KEY else text


def error_detail(body: Any) -> tuple[str, str | None]:
    """(message, code) from an OpenAI- or Mistral-style error body (dict or JSON text)."""
    if isinstance(body, str | bytes):
        try:
            body = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return (body.decode("utf-8", "replace") if isinstance(body, bytes) else body), None
    if isinstance(body, Mapping):
        error = body.get("error")
        inner = error if isinstance(error, Mapping) else body
        message = inner.get("message") or inner.get("detail") or json.dumps(body)
        code = inner.get("code")
        return str(message), None if code is None else str(code)
    return str(body), None


def classify_status(
    spec: str,
    status: int,
    body: Any,
    headers: Mapping[str, str] | None,
    key: str,
    auth_hint: str,
) -> Exception:
    """The exception to raise (or retry, for TransientError) for an HTTP error response."""
    message, code = error_detail(body)
    message = scrub(message, key)
    if status in _RETRY_STATUSES or status >= 500:
        return TransientError(f"HTTP {status}: {message[:200]}", retry_after_seconds(headers))
    if status in (401, 403):
        return AuthError(f"{spec}: authentication failed (HTTP {status}); {auth_hint}")
    if is_context_length_message(code, message):
        return ContextLengthError(spec, message)
    return BadRequestError(f"{spec}: request refused (HTTP {status}): {message[:500]}")


def build_completion(
    *,
    text: str,
    messages: list[dict],
    model: str,
    provider_usage: tuple[int, int, int] | tuple[int, int, int, int] | None,
    price: Price | None,
    started: float,
    attempts: int,
) -> Completion:
    """A Completion with provider usage if present (input, output, cache reads[, cache writes]),
    else tiktoken counts, priced by the table."""
    source: UsageSource
    if provider_usage is not None:
        usage, source = Usage(*provider_usage), "provider"
    else:
        usage, source = Usage(count_message_tokens(messages), count_tokens(text), 0), "tiktoken"
    return Completion(
        text=text,
        usage=usage,
        model=model,
        latency_s=time.perf_counter() - started,
        cost_usd=price.cost(usage) if price else 0.0,
        usage_source=source,
        price_known=price is not None,
        attempts=attempts,
    )
