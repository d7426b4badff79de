"""OpenAI chat completions (official `openai` SDK), also for any OpenAI-compatible server.

The SDK's own retries are off (`max_retries=0`) so ours are counted; reasoning models (gpt-5*,
o-series) on the official API reject `temperature` and `max_tokens`, so those are adapted.
"""

import os
import re
import time
from typing import Any

import httpx
import openai
from openai.types.chat import ChatCompletion

from rlm_docs.call_purpose import current
from rlm_docs.models.base import Completion
from rlm_docs.models.endpoints import KEY_ENV, is_official
from rlm_docs.models.http_common import build_completion, classify_status, resolve_key, scrub
from rlm_docs.models.prices import PricesArg, load_prices
from rlm_docs.models.retry import RetryPolicy, TransientError, call_with_retries
from rlm_docs.models.sdk_pool import SdkPool
from rlm_docs.models.spec import ModelSpec

ENV_KEY = KEY_ENV["openai"]
_REASONING = re.compile(r"^(o\d|gpt-5)")


def request_params(
    model: str,
    messages: list[dict],
    temperature: float,
    max_tokens: int | None,
    *,
    official: bool,
) -> dict[str, Any]:
    """Chat-completion arguments; the official API's reasoning models take no temperature and
    spell the output cap `max_completion_tokens`, while compatible servers expect `max_tokens`."""
    kwargs: dict[str, Any] = {"model": model, "messages": messages}
    if not (official and _REASONING.match(model)):
        kwargs["temperature"] = temperature
    if max_tokens is not None:
        kwargs["max_completion_tokens" if official else "max_tokens"] = max_tokens
    return kwargs


class OpenAIClient:
    """`openai:MODEL[@BASE_URL]`; the key comes from OPENAI_API_KEY and is never shown."""

    backend = "openai"

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
        self.base_url = spec.base_url or os.environ.get("OPENAI_BASE_URL") or None
        self.price = load_prices(prices).lookup(self.model)
        self.retry = retry or RetryPolicy()
        self.timeout_s = timeout_s
        self._official = is_official("openai", self.base_url)
        self._key, self._auth_hint = resolve_key(ENV_KEY, self.spec, "openai", self.base_url)
        # Building an SDK client builds an SSL context (~30 ms of CPU, certificates parsed);
        # the pooled clients (`sdk_pool`: one per call in flight) share this one.
        ssl_context = httpx.create_ssl_context(trust_env=True)
        self._pool = SdkPool(
            lambda: openai.OpenAI(
                api_key=self._key,
                base_url=self.base_url,
                max_retries=0,
                timeout=timeout_s,
                http_client=openai.DefaultHttpxClient(verify=ssl_context),
            )
        )

    def __repr__(self) -> str:
        return f"OpenAIClient(spec={self.spec!r})"

    def _once(self, body: dict, timeout_s: float | None, headers: dict[str, str]) -> Any:
        # never wait past the wall-time deadline
        options: openai.RequestOptions = {"headers": headers} if headers else {}
        if timeout_s is not None:
            options["timeout"] = min(timeout_s, self.timeout_s)
        with self._pool.lease() as sdk:
            return self._post(sdk, body, options)

    def _post(
        self, sdk: openai.OpenAI, body: dict[str, Any], options: openai.RequestOptions
    ) -> Any:
        try:
            # The SDK's `chat.completions.create` first walks every message through its
            # TypedDict transform, ~5 ms of CPU per call on an RLM's long prompts: with dozens
            # of questions in flight that is most of a core. The body here is plain JSON
            # already, so it is posted as is (the SDK's documented `post`; same errors).
            return sdk.post("/chat/completions", cast_to=ChatCompletion, body=body, options=options)
        except openai.APIStatusError as exc:
            raise classify_status(
                self.spec,
                exc.status_code,
                exc.body,
                exc.response.headers,
                self._key,
                self._auth_hint,
            ) from None
        except openai.APITimeoutError:
            raise TransientError(f"timeout waiting for {sdk.base_url}") from None
        except openai.APIConnectionError as exc:
            detail = scrub(str(exc), self._key).rstrip(".")
            raise TransientError(f"cannot reach {sdk.base_url}: {detail}") from None
        except (openai.APIResponseValidationError, ValueError) as exc:
            raise TransientError(f"malformed response: {type(exc).__name__}") from None

    def complete(
        self,
        messages: list[dict],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        **params: Any,
    ) -> Completion:
        """One chat completion, retried on transient failures. The call's role (`rlm_docs.call_purpose`)
        goes to the endpoint in request headers, never into the messages."""
        started = time.perf_counter()
        kwargs = (
            request_params(self.model, messages, temperature, max_tokens, official=self._official)
            | params
        )
        purpose = current()
        headers = purpose.headers() if purpose is not None else {}

        def attempt(timeout_s: float | None) -> Any:
            response = self._once(kwargs, timeout_s, headers)
            if not getattr(response, "choices", None):
                raise TransientError("malformed response: no choices")
            return response

        response, attempts = call_with_retries(attempt, self.retry, self.spec)
        usage = response.usage
        provider_usage = None
        if usage is not None and usage.prompt_tokens is not None:
            details = getattr(usage, "prompt_tokens_details", None)
            cached = getattr(details, "cached_tokens", None) or 0
            # Anthropic's cache writes, as OpenAI-compatible gateways pass them on
            written = int(getattr(usage, "cache_creation_input_tokens", None) or 0)
            provider_usage = (usage.prompt_tokens, usage.completion_tokens or 0, cached, written)
        return build_completion(
            text=response.choices[0].message.content or "",
            messages=messages,
            model=self.model,
            provider_usage=provider_usage,
            price=self.price,
            started=started,
            attempts=attempts,
        )
