"""An isolated, persistent Python REPL for model-written code (see `host.Sandbox`).

The sandbox knows nothing of what its code is for: a host that wants a corpus, helpers or data in
every worker's namespace names a factory that builds them (`preload.Preload`), which the fork
server calls once before forking workers. Usage on its own is shown in `docs/sandbox.md`.
"""

from sandbox.errors import ConfigError, PreloadError, SandboxError
from sandbox.host import Sandbox
from sandbox.limits import CellOutcome, Limits
from sandbox.preload import Preload, Preloaded

__all__ = [
    "CellOutcome",
    "ConfigError",
    "Limits",
    "Preload",
    "PreloadError",
    "Preloaded",
    "Sandbox",
    "SandboxError",
]
