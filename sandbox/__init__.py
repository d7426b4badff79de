"""An isolated, persistent Python REPL for model-written code (see `host.Sandbox`).

Why this is `rlm_docs.sandbox` and not a top-level `sandbox` package: data flows corpus ->
sandbox -> engine, and the sandbox is part of that one pipeline, not a separate library. Its fork
server builds the corpus helpers the model calls over `rlm_docs.corpus` (`helpers.make_helpers`),
and it reports errors through `rlm_docs.errors`; as a separate top-level package it imported
`rlm_docs` while `rlm_docs.engine` imported it, a cycle across two packages. A generic top-level
name `sandbox` installed into site-packages would also collide with any other project's.
"""

from rlm_docs.sandbox.host import Sandbox, SandboxError
from rlm_docs.sandbox.limits import CellResult, Limits

__all__ = ["CellResult", "Limits", "Sandbox", "SandboxError"]
