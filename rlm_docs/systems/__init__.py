"""Systems compared by `rlm-docs eval`: `rlm`, `bm25-agent`, `static-rag`, `long-context`,
`map-reduce` (see `base`)."""

from rlm_docs.systems.base import SYSTEM_NAMES, System, SystemConfig, make_system

__all__ = ["SYSTEM_NAMES", "System", "SystemConfig", "make_system"]
