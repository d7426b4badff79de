"""rlm-docs' side of the REPL: the corpus helpers model code calls, and the sandbox that has them.

The `sandbox` package runs code and knows nothing of corpora; `preload.load_corpus` is the
factory its fork server calls to load a store once, and `CorpusSandbox` is a `sandbox.Sandbox`
over a store.
"""

from rlm_docs.repl.corpus_sandbox import CorpusSandbox

__all__ = ["CorpusSandbox"]
