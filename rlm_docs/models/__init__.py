"""Model clients: one protocol, several backends, a response cache and a price table.

`make_client("openai:gpt-5-mini" | "mistral:mistral-large-latest" | "openai:m@http://host/v1"
| "offline" | "scripted:FILE")` returns a `Client` whose `complete(messages)` gives a `Completion`.
"""

from rlm_docs.models.base import Client, Completion, Usage
from rlm_docs.models.cache import CachedClient, ResponseCache, default_cache
from rlm_docs.models.errors import (
    AuthError,
    BadRequestError,
    ContextLengthError,
    ModelUnavailableError,
)
from rlm_docs.models.factory import make_client
from rlm_docs.models.prices import Price, PriceTable, context_window_of, load_prices, price_of
from rlm_docs.models.retry import RetryPolicy
from rlm_docs.models.scripted import ScriptedClient
from rlm_docs.models.spec import ModelSpec, parse_spec

__all__ = [
    "AuthError",
    "BadRequestError",
    "CachedClient",
    "Client",
    "Completion",
    "ContextLengthError",
    "ModelSpec",
    "ModelUnavailableError",
    "Price",
    "PriceTable",
    "ResponseCache",
    "RetryPolicy",
    "ScriptedClient",
    "Usage",
    "context_window_of",
    "default_cache",
    "load_prices",
    "make_client",
    "parse_spec",
    "price_of",
]
