"""Mistral chat completions through the official `mistralai` SDK (3.x: `mistralai.client`).

The SDK's retries are disabled (`retry_config=None`) so ours are counted. Its response model
requires a usage object, so a reply without one fails validation; we then read the raw body
ourselves and count tokens with tiktoken rather than retrying a good answer.
"""

import importlib
import json
import os
import time
from typing import Any

from mistralai.client import Mistral
from mistralai.client.errors import MistralError, NoResponseError, ResponseValidationError

from rlm_docs.models.base import Completion
from rlm_docs.models.endpoints import KEY_ENV
from rlm_docs.models.http_common import build_completion, classify_status, resolve_key, scrub
from rlm_docs.models.prices import PricesArg, load_prices
from rlm_docs.models.retry import RetryPolicy, TransientError, call_with_retries
from rlm_docs.models.sdk_pool import SdkPool
from rlm_docs.models.spec import ModelSpec

ENV_KEY = KEY_ENV["mistral"]
DEFAULT_SERVER = "https://api.mistral.ai"


def _transport_errors() -> tuple[type[BaseException], ...]:
    """Connection/timeout errors of whichever httpx flavour the SDK uses."""
    found = []
    for name in ("httpx2", "httpx"):
        try:
            found.append(importlib.import_module(name).TransportError)
        except (ImportError, AttributeError):
            continue
    return tuple(found)


TRANSPORT_ERRORS = _transport_errors()


def _text(content: Any) -> str:
    """Message content as text (the SDK may return a list of content chunks)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for chunk in content:
        text = chunk.get("text") if isinstance(chunk, dict) else getattr(chunk, "text", None)
        if text:
            parts.append(text)
    return "".join(parts)


class MistralClient:
    """`mistral:MODEL[@BASE_URL]`; the key comes from MISTRAL_API_KEY and is never shown."""

    backend = "mistral"

    def __init__(
        self,
        spec: ModelSpec,
        *,
        prices: PricesArg = None,
        retry: RetryPolicy | None = None,
        timeout_s: float = 120.0,
    ) -> None:
        self.spec = str(spec)
        self.model = spec.model
        self.base_url = spec.base_url or os.environ.get("MISTRAL_BASE_URL") or None
        self.price = load_prices(prices).lookup(self.model)
        self.retry = retry or RetryPolicy()
        self.timeout_s = timeout_s
        self._key, self._auth_hint = resolve_key(ENV_KEY, self.spec, "mistral", self.base_url)
        self._server = self.base_url or DEFAULT_SERVER  # named in connection errors
        self._pool = SdkPool(  # one SDK client (so one connection pool) per call in flight
            lambda: Mistral(
                api_key=self._key,
                server_url=self.base_url,
                retry_config=None,
                timeout_ms=int(timeout_s * 1000),
            )
        )

    def __repr__(self) -> str:
        return f"MistralClient(spec={self.spec!r})"

    def _once(
        self, kwargs: dict, timeout_s: float | None
    ) -> tuple[str, tuple[int, int, int] | None]:
        if timeout_s is not None:  # never wait past the wall-time deadline
            kwargs = kwargs | {"timeout_ms": max(1, int(min(timeout_s, self.timeout_s) * 1000))}
        try:
            with self._pool.lease() as sdk:
                response = sdk.chat.complete(**kwargs)
        except ResponseValidationError as exc:
            return self._from_raw(exc.body)
        except MistralError as exc:
            raise classify_status(
                self.spec, exc.status_code, exc.body, exc.headers, self._key, self._auth_hint
            ) from None
        except NoResponseError:
            raise TransientError(f"no response from {self._server}") from None
        except TRANSPORT_ERRORS as exc:
            detail = f"{type(exc).__name__}: {scrub(str(exc), self._key)}"
            raise TransientError(f"cannot reach {self._server}: {detail}") from None
        if not response.choices:
            raise TransientError("malformed response: no choices")
        usage = response.usage
        given = usage is not None and "prompt_tokens" in usage.model_fields_set
        provider_usage = None
        if given:
            details = (usage.model_extra or {}).get("prompt_tokens_details") or {}
            cached = int(details.get("cached_tokens") or 0) if isinstance(details, dict) else 0
            provider_usage = (usage.prompt_tokens or 0, usage.completion_tokens or 0, cached)
        message = response.choices[0].message
        return _text(None if message is None else message.content), provider_usage

    def _from_raw(self, body: str) -> tuple[str, tuple[int, int, int] | None]:
        """Salvage a well-formed reply that only lacks fields the SDK insists on (usage)."""
        try:
            data = json.loads(body)
            text = _text(data["choices"][0]["message"]["content"])
        except (json.JSONDecodeError, KeyError, IndexError, TypeError):
            raise TransientError("malformed response body") from None
        usage = data.get("usage") or {}
        if "prompt_tokens" in usage:
            return text, (int(usage["prompt_tokens"]), int(usage.get("completion_tokens", 0)), 0)
        return text, None

    def complete(
        self,
        messages: list[dict],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        **params: Any,
    ) -> Completion:
        """One chat completion, retried on transient failures."""
        started = time.perf_counter()
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages}
        kwargs["temperature"] = temperature
        if max_tokens is not None:
            kwargs["max_tokens"] = max_tokens
        kwargs.update(params)
        (text, provider_usage), attempts = call_with_retries(
            lambda timeout_s: self._once(kwargs, timeout_s), self.retry, self.spec
        )
        return build_completion(
            text=text,
            messages=messages,
            model=self.model,
            provider_usage=provider_usage,
            price=self.price,
            started=started,
            attempts=attempts,
        )
