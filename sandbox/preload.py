"""What the fork server loads once, before forking workers: named by the host, built by a factory.

The sandbox knows nothing of what its workers are for. A host that wants objects in every
worker's namespace (a corpus, search helpers, a large string) names a factory as
`"package.module:function"` with JSON-able keyword arguments (`Preload`); the fork server imports
and calls it once, and each forked worker starts with a copy-on-write copy of what it returned
(`Preloaded`). A name rather than a callable: the fork server is a fresh interpreter started with
a minimal environment, and a JSON message cannot carry code (pickle would let a forged message
run code in the host's name).
"""

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Preload:
    """The factory `"module:function"`, its keyword arguments, and `key`: what identifies the
    loaded data beyond the arguments (e.g. a store's file identity, so a rewritten store gets a
    fresh fork server). Fork servers are shared by every sandbox with equal `Preload`s."""

    factory: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    key: str | None = None

    def __post_init__(self) -> None:
        module, _, name = self.factory.partition(":")
        if not module or not name.isidentifier():
            raise ValueError(f"preload factory {self.factory!r} is not 'module:function'")


@dataclass
class Preloaded:
    """What a factory returns. `namespace`: names bound in every worker (exception classes
    among them are also the classes host-function errors of that name are raised as). `logs`:
    lists the namespace's functions append to, kept out of the namespace and read by the host
    with `Sandbox.log(name)` (model code cannot rewrite them). `modules`: extra allow-listed
    modules, `{"module": "name name ..."}`, that cells may import. `phases`: seconds spent in
    each loading phase, reported in `Sandbox.start_phases`."""

    namespace: dict[str, Any] = field(default_factory=dict)
    logs: dict[str, list[Any]] = field(default_factory=dict)
    modules: dict[str, str] = field(default_factory=dict)
    phases: dict[str, float] = field(default_factory=dict)


def call(factory: str, kwargs: Mapping[str, Any]) -> Preloaded:
    """Import and call `factory` (in the fork server); a plain dict result is a namespace."""
    module, _, name = factory.partition(":")
    result = getattr(importlib.import_module(module), name)(**kwargs)
    if isinstance(result, Preloaded):
        return result
    if isinstance(result, dict):
        return Preloaded(namespace=result)
    raise TypeError(f"preload factory {factory} returned {type(result).__name__}, not Preloaded")
