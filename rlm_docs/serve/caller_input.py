"""What a network caller sends, checked before it reaches a run: parseable JSON, budget overrides
capped by the server's, and dollar limits only on priced models. Shared by `serve` and the MCP
server's `ask`, so both refuse the same inputs with a message naming the field (a 400 or a tool
error), never a crash inside the run.
"""

import json
from dataclasses import fields, replace
from typing import Any

from rlm_docs.errors import RlmDocsError
from rlm_docs.governor import Budget
from rlm_docs.models import Client, price_of


class BadField(ValueError):
    """A caller's value refused; the message starts with the field's name."""


_NUMERIC = [f.name for f in fields(Budget) if f.name.startswith("max_")]
EXTENSION = "rlm_docs"  # the request's own object beside the OpenAI fields (`wire`)


def request_budget(server: Budget, given: Any, prefix: str = f"{EXTENSION}.budget") -> Budget:
    """The server's budget with the caller's `max_*` overrides, each checked as `Budget` checks
    it (a number, finite, not negative, whole where it counts) and capped at the server's."""
    if given is None:
        return server
    if not isinstance(given, dict):
        raise BadField(f"{prefix} must be an object of max_* limits")
    unknown = sorted(set(given) - set(_NUMERIC))
    if unknown:
        raise BadField(f"{prefix}: unknown field {unknown[0]!r} (allowed: {_NUMERIC})")
    changes: dict[str, Any] = {}
    for name, value in given.items():
        field = f"{prefix}.{name}"
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise BadField(f"{field}: expected a number, got {json.dumps(value)[:80]}")
        try:
            Budget(**{name: value})  # type: ignore[arg-type]  # the field's own checks
        except RlmDocsError as exc:
            raise BadField(f"{field}: {str(exc).partition(': ')[2]}") from None
        cap = getattr(server, name)
        changes[name] = value if cap is None else min(value, cap)
    try:
        return replace(server, **changes)
    except RlmDocsError as exc:
        raise BadField(f"{prefix}: {exc}") from None


def unpriced(budget: Budget, clients: list[Client]) -> str | None:
    """The first of `clients` whose price is unknown when `budget` has a dollar limit (the
    governor cannot enforce one for it), else None."""
    if budget.max_cost_usd is None:
        return None
    return next((c.spec for c in clients if price_of(c) is None), None)


def parse_json(data: bytes | bytearray | str) -> Any:
    """The body as Python, or ValueError with the reason: malformed text, an integer of more
    digits than Python converts, nesting past the recursion limit. NaN and Infinity parse (as
    Python's `json` reads them) so that the check of the field holding one names it."""
    try:
        return json.loads(data)
    except RecursionError:
        raise ValueError("nested too deeply") from None
