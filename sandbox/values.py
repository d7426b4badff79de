"""Turning worker values into JSON for the host, and short descriptions for SHOW_VARS()."""

import math
from typing import Any

_MAX_DEPTH = 50


def to_jsonable(value: Any, depth: int = 0) -> Any:
    """A JSON-able copy: tuples/sets become lists, dict keys strings, other objects `str()`."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if depth >= _MAX_DEPTH:
        raise ValueError("value is nested too deeply to copy")
    if isinstance(value, dict):
        return {str(k): to_jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v, depth + 1) for v in value]
    if isinstance(value, set | frozenset):
        items = [to_jsonable(v, depth + 1) for v in value]
        try:
            return sorted(items)
        except TypeError:
            return items
    return str(value)


class _Cap:
    """The budget of one `capped` copy: string characters and values left to keep."""

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        self.chars = max_chars
        self.values = max_chars

    def marker(self, left: int, what: str) -> str:
        return (
            f"[answer cut here: {left:,} more {what} not returned; answers are limited to "
            f"{self.max_chars:,} characters]"
        )

    def copy(self, value: Any) -> Any:
        self.values -= 1
        if isinstance(value, str):
            keep = max(self.chars, 0)
            self.chars -= len(value)
            if len(value) <= keep:
                return value
            return value[:keep] + self.marker(len(value) - keep, "characters")
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for i, (k, v) in enumerate(value.items()):
                if self.values <= 0:
                    out["..."] = self.marker(len(value) - i, "entries")
                    break
                out[k] = self.copy(v)
            return out
        if isinstance(value, list):
            items: list[Any] = []
            for i, v in enumerate(value):
                if self.values <= 0:
                    items.append(self.marker(len(value) - i, "items"))
                    break
                items.append(self.copy(v))
            return items
        return value


def capped(value: Any, max_chars: int) -> Any:
    """A JSON-able `value` (from `to_jsonable`) holding at most `max_chars` characters of
    strings and `max_chars` values: a longer string is cut, and later list items and dict
    entries are left out, each cut marked in place with how much was left out (so a model
    reading it knows). Numbers, booleans and None are kept while values are left, so the
    `ready` flag of an answer dict survives its long `content`."""
    return _Cap(max_chars).copy(value)


MAX_NESTING = 100


def check_nesting(value: Any, limit: int = MAX_NESTING) -> None:
    """Refuse lists/tuples/dicts nested deeper than `limit` (iteratively: no recursion), so a
    frame never holds structures the host's JSON decoder would have to recurse through."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth >= limit:
            raise ValueError(f"value is nested more than {limit} levels deep")
        stack.extend((child, depth + 1) for child in children)


def describe(value: Any) -> str:
    """`str, 1,234 chars` / `list, 3 items` / `dict, 2 keys` / `function` / the type name."""
    kind = type(value).__name__
    if isinstance(value, str | bytes):
        return f"{kind}, {len(value):,} chars"
    if isinstance(value, dict):
        return f"{kind}, {len(value):,} keys"
    if isinstance(value, list | tuple | set | frozenset):
        return f"{kind}, {len(value):,} items"
    if kind == "SafeModule":
        return "module"
    if isinstance(value, type):
        return "class"
    if callable(value):
        return "function"
    return kind
