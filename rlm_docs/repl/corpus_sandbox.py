"""`CorpusSandbox`: a `sandbox.Sandbox` whose workers start with a corpus store's helpers.

The host names the preload factory (`rlm_docs.repl.preload.load_corpus`) with the store and the
context cache directory, keyed by the store's file identity so that a store rewritten in place
gets a fresh fork server, and maps the sandbox's report of a bad store back to `CorpusError`.
"""

import contextlib
import os
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any

from rlm_docs.errors import CorpusError
from rlm_docs.repl import context_cache
from sandbox import Limits, Preload, PreloadError, Sandbox


def corpus_preload(store: Path) -> Preload:
    """The preload of a worker on `store`: its helpers, `context` and page logs."""
    cache = context_cache.cache_dir()
    key = None
    with contextlib.suppress(OSError):  # not a store: the fork server's load will say why
        key = context_cache.cache_key(store)
    kwargs = {"store": str(store.resolve()), "cache_dir": None if cache is None else str(cache)}
    return Preload("rlm_docs.repl.preload:load_corpus", kwargs, key)


class CorpusSandbox(Sandbox):
    """A sandbox with, given a `corpus` (a store directory), `context`, `corpus`, `pages_read()`
    and the helpers of `rlm_docs.repl.helpers` in its namespace (`names` limits those to the
    ones given), and `pages_read()`/`pages_seen()` on the host. Without one it is a plain
    `Sandbox`."""

    def __init__(
        self,
        limits: Limits | None = None,
        corpus: str | os.PathLike[str] | None = None,
        functions: Mapping[str, Callable[..., Any]] | None = None,
        names: Collection[str] | None = None,
    ) -> None:
        self.corpus = None if corpus is None else Path(corpus)
        if self.corpus is not None and not self.corpus.is_dir():
            raise CorpusError(f"{self.corpus}: corpus store directory not found")
        super().__init__(limits, functions, names)

    def _start(self) -> None:
        # Named again at each (re)start: a store rewritten since is loaded afresh.
        self.preload = None if self.corpus is None else corpus_preload(self.corpus)
        try:
            super()._start()
        except PreloadError as exc:
            if exc.kind == "CorpusError":
                raise CorpusError(exc.detail) from None
            raise

    def pages_read(self) -> list[list[Any]]:
        """`[[doc, page], ...]` read with page/pages/lines/read_section since the worker started, in
        first-read order; [] without a corpus. The corpus helpers record them in a log the
        worker keeps outside the namespace, so model code cannot change this answer."""
        return self.log("read")

    def pages_seen(self) -> list[list[Any]]:
        """`[[doc, page], ...]` named by `search`, `grep` and `locate` results since the worker
        started, in first-seen order (kept like `pages_read`, out of model code's reach)."""
        return self.log("seen")
