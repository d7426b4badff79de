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
