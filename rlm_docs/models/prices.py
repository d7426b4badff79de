"""Dollar cost of a call from a dated price table, so budgets work even when providers send no price.

The table is also the model table: an optional `context_window` per model (tokens one request
may hold, prompt + reply) sizes what the `long-context` and `map-reduce` baselines send.

Costs are computed in whole nano-dollars (1e-9 USD) and summed as integers, so a ledger total
equals the governor's running total exactly, whatever order calls finished in.
"""

import json
import os
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any

from rlm_docs.env import blame, env_value
from rlm_docs.errors import ConfigError
from rlm_docs.models.base import Usage

_DEFAULT_TABLE = Path(__file__).resolve().parents[1] / "data" / "prices.json"
_NANO = Decimal(1_000_000_000)
_FIELDS = ("input", "output", "cached_input")


@dataclass(frozen=True)
class Price:
    """USD per 1M tokens, and the model's context window in tokens (None when not listed).
    `cache_write_input` is the rate of input written to the prompt cache (Anthropic charges it
    apart, above `input`); None: charged as `input`."""

    input: float
    output: float
    cached_input: float
    context_window: int | None = None
    cache_write_input: float | None = None

    def cost(self, usage: Usage) -> float:
        """Cost of `usage`; cache reads and cache writes are charged at their own rates."""
        fresh = max(usage.input_tokens - usage.cached_tokens - usage.cache_write_tokens, 0)
        write = self.input if self.cache_write_input is None else self.cache_write_input
        dollars = (
            Decimal(fresh) * Decimal(str(self.input))
            + Decimal(usage.cached_tokens) * Decimal(str(self.cached_input))
            + Decimal(usage.cache_write_tokens) * Decimal(str(write))
            + Decimal(usage.output_tokens) * Decimal(str(self.output))
        ) / Decimal(1_000_000)
        nano = (dollars * _NANO).quantize(Decimal(1), rounding=ROUND_HALF_UP)
        return int(nano) / 1e9


FREE = Price(0.0, 0.0, 0.0)


def to_nano(usd: float) -> int:
    """Integer nano-dollars of a cost produced by `Price.cost` (exact round trip)."""
    return round(usd * 1e9)


def sum_usd(costs: list[float]) -> float:
    """Order-independent exact sum of costs."""
    return sum(to_nano(c) for c in costs) / 1e9


@dataclass(frozen=True)
class PriceTable:
    """Per-model prices; lookup by exact name, then by the longest matching prefix."""

    models: dict[str, Price]
    date: str
    currency: str = "USD"

    def lookup(self, model: str) -> Price | None:
        """Price of `model` (e.g. `gpt-5-mini-2025-08-07` falls back to `gpt-5-mini`), or None."""
        if model in self.models:
            return self.models[model]
        prefixes = [name for name in self.models if model.startswith(name)]
        return self.models[max(prefixes, key=len)] if prefixes else None

    def merged(self, other: "PriceTable") -> "PriceTable":
        """This table with `other`'s entries added or replacing; `other`'s date wins."""
        return PriceTable({**self.models, **other.models}, other.date, other.currency)


def _parse_table(data: Any, source: str) -> PriceTable:
    if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
        raise ConfigError(f"price table {source}: expected an object with a 'models' object")
    models: dict[str, Price] = {}
    for name, entry in data["models"].items():
        if not isinstance(entry, dict):
            raise ConfigError(f"price table {source}: model {name!r} must be an object")
        values: dict[str, float] = {}
        for field in _FIELDS:
            value = entry.get(field, entry.get("input") if field == "cached_input" else None)
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ConfigError(
                    f"price table {source}: model {name!r} field {field!r} must be a "
                    f"non-negative number (USD per 1M tokens), got {value!r}"
                )
            values[field] = float(value)
        write = entry.get("cache_write_input")
        if write is not None and (
            isinstance(write, bool) or not isinstance(write, int | float) or write < 0
        ):
            raise ConfigError(
                f"price table {source}: model {name!r} field 'cache_write_input' must be a "
                f"non-negative number (USD per 1M tokens), got {write!r}"
            )
        window = entry.get("context_window")
        if window is not None and (
            isinstance(window, bool) or not isinstance(window, int) or window < 1
        ):
            raise ConfigError(
                f"price table {source}: model {name!r} field 'context_window' must be a "
                f"positive whole number of tokens, got {window!r}"
            )
        models[name] = Price(
            **values,
            context_window=window,
            cache_write_input=None if write is None else float(write),
        )
    return PriceTable(models, str(data.get("date", "unknown")), str(data.get("currency", "USD")))


def read_price_file(path: str | os.PathLike) -> PriceTable:
    """Parse a price-table JSON file; ConfigError names the file and field on bad content."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"price table {path}: file not found") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"price table {path}: not readable JSON ({exc})") from None
    return _parse_table(data, str(path))


@lru_cache(maxsize=1)
def default_prices() -> PriceTable:
    """The bundled table (`rlm_docs/data/prices.json`)."""
    return read_price_file(_DEFAULT_TABLE)


PricesArg = PriceTable | dict | str | os.PathLike | None


def load_prices(prices: PricesArg = None) -> PriceTable:
    """The table to use: bundled, overlaid by `prices` (table, dict or file) or RLM_DOCS_PRICES."""
    base = default_prices()
    if isinstance(prices, PriceTable):
        return prices
    if isinstance(prices, dict):
        return base.merged(_parse_table(prices, "argument"))
    if prices:
        return base.merged(read_price_file(prices))
    override = env_value("RLM_DOCS_PRICES")
    if override is None:
        return base
    with blame("RLM_DOCS_PRICES", override):
        return base.merged(read_price_file(override))


def price_of(client: Any) -> Price | None:
    """The price a client charges: its own `price` attribute, free for offline, else the table."""
    if hasattr(client, "price"):
        return client.price
    if getattr(client, "backend", None) == "offline":
        return FREE
    return load_prices().lookup(getattr(client, "model", ""))


def context_window_of(client: Any) -> int | None:
    """Tokens one request to `client` may hold: its own `context_window` attribute, else the
    table's entry for its model (the offline model has a nominal entry), else None."""
    own = getattr(client, "context_window", None)
    if own:
        return int(own)
    price = getattr(client, "price", None) or load_prices().lookup(getattr(client, "model", ""))
    return price.context_window if price is not None else None
