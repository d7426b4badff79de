"""An isolated, persistent Python REPL for model-written code (see `sandbox.host.Sandbox`)."""

from sandbox.host import Sandbox, SandboxError
from sandbox.limits import CellResult, Limits

__all__ = ["CellResult", "Limits", "Sandbox", "SandboxError"]
