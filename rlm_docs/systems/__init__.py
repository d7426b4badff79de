"""Systems compared by `rlm-docs eval`, each declared once (`declaration`) and registered
(`registry`); `SYSTEM_NAMES`: the registered ones' names."""

from typing import Any

from rlm_docs.systems.base import System, SystemConfig, make_system
from rlm_docs.systems.registry import system_names

__all__ = ["SYSTEM_NAMES", "System", "SystemConfig", "make_system"]


def __getattr__(name: str) -> Any:
    """`SYSTEM_NAMES`, read when asked (built-in systems register on their first look-up)."""
    if name == "SYSTEM_NAMES":
        return system_names()
    raise AttributeError(name)
