"""`py:package.module:factory`: a model client of your own, named on the command line.

`RLM(model=client)` takes any object implementing the `Client` protocol, but `eval`, `sweep`
and `serve` take model strings (and Ray workers rebuild clients from them), so a client
enters a study through the import path of a factory that returns one: `factory()` is called
once per client the run builds (per system, sub-model or judge, and per Ray node). The module
must be importable (installed, or on PYTHONPATH); the object it returns is checked against the
protocol before anything runs.
"""

import importlib
import re

from rlm_docs.errors import ConfigError
from rlm_docs.models.base import Client

_TARGET = re.compile(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*")


def python_target(text: str, target: str) -> str:
    """`package.module:factory` from the model string `text`; ConfigError naming it if the
    part after `py:` is not of that form."""
    if not _TARGET.fullmatch(target):
        raise ConfigError(
            f"model {text!r}: expected py:package.module:factory (a function that returns a Client)"
        )
    return target


def load_python_client(target: str) -> Client:
    """Import `package.module`, call `factory()` and check that it returned a `Client`."""
    spec = f"py:{target}"
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(
            f"model {spec}: cannot import {module_name} ({exc}); install it or put its "
            "directory on PYTHONPATH"
        ) from None
    factory = getattr(module, attr, None)
    if not callable(factory):
        raise ConfigError(f"model {spec}: {module_name} has no function {attr}")
    client = factory()
    if not isinstance(client, Client):
        raise ConfigError(
            f"model {spec}: {attr}() returned {type(client).__name__}, not a Client (it needs "
            "spec, backend and model attributes and a complete(messages, ...) method)"
        )
    return client
