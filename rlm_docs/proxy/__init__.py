"""The metering proxy: an OpenAI-compatible endpoint that puts any agent's model calls through
rlm-docs' governor and ledger (see docs/proxy.md)."""

from rlm_docs.proxy.meter import DEFAULT_QUESTION, Meter
from rlm_docs.proxy.server import MeteringProxy

__all__ = ["DEFAULT_QUESTION", "Meter", "MeteringProxy"]
