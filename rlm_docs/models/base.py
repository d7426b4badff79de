"""The one client contract every backend implements: chat messages in, a `Completion` out.

Keeping usage, cost and provenance (provider-reported vs tiktoken-counted, cached or not) on the
completion itself lets the governor and ledger account for every call without knowing which
backend produced it.
"""

from dataclasses import asdict, dataclass
from typing import Any, Literal, Protocol, runtime_checkable

UsageSource = Literal["provider", "tiktoken"]


@dataclass(frozen=True)
class Usage:
    """Token counts of one call. `cached_tokens` (cache reads) and `cache_write_tokens` (input
    written to the provider's prompt cache) are parts of `input_tokens`: providers that report
    them (Anthropic's `cache_read_input_tokens` / `cache_creation_input_tokens`) price each at
    its own rate (`Price.cost`)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0


@dataclass(frozen=True)
class Completion:
    """One model reply with everything needed to account for it."""

    text: str
    usage: Usage
    model: str
    latency_s: float
    cost_usd: float
    cached: bool = False
    usage_source: UsageSource = "provider"
    price_known: bool = True
    attempts: int = 1
    call_id: str | None = None  # the ledger entry's id, set by the governor

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (usage nested as a dict)."""
        return asdict(self)


@runtime_checkable
class Client(Protocol):
    """What the governor, cache and engine need from a backend."""

    spec: str
    backend: str
    model: str

    def complete(
        self,
        messages: list[dict],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        **params: Any,
    ) -> Completion: ...
