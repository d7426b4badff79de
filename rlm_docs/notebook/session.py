"""`Session`: the model's sandbox, driven by hand from a notebook.

A researcher tries exactly what the root model can do — `search()`, `page()`, `toc()`,
`read_section()` over the corpus, and `llm_query()` when a model is given — in the same
sandboxed worker, with the same limits, before asking anything of a model.
"""

import os
import tempfile
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from rlm_docs.corpus import Corpus
from rlm_docs.errors import ConfigError
from rlm_docs.governor import Budget, Governor, Ledger

CorpusLike = Corpus | str | os.PathLike | None


def open_corpus(corpus: CorpusLike) -> Corpus | None:
    """A `Corpus` from a store path (CorpusError if invalid) or `demo` (the bundled demo store,
    as on the command line), or the one given."""
    from rlm_docs.ingest.demo import resolve_store

    if corpus is None or isinstance(corpus, Corpus):
        return corpus
    return Corpus.load(resolve_store(corpus))


class Session:
    """An interactive sandbox over `corpus` (a `Corpus`, a store path, `demo`, or None for a bare
    REPL).

    `functions`: extra host functions (name -> callable on JSON-able values). `model`: a model
    string or client; when given, `llm_query`, `llm_query_batched`, `rlm_query` and `cite` are
    offered through a `Governor` over `budget`, so every call lands in `ledger`. The worker
    starts on the first `run` and stops on `close()` (or leaving a `with` block).
    """

    def __init__(
        self,
        corpus: CorpusLike = None,
        functions: dict[str, Callable[..., Any]] | None = None,
        limits: Any = None,
        *,
        model: Any = None,
        budget: Budget | None = None,
    ) -> None:
        self.corpus = open_corpus(corpus)
        self.limits = limits
        self.model = model
        self.ledger = Ledger()
        self.governor: Governor | None = None
        host: dict[str, Callable[..., Any]] = {}
        if model is not None:
            from rlm_docs.engine.host_functions import HostFunctions
            from rlm_docs.models import make_client

            client = make_client(model) if isinstance(model, str) else model
            self.governor = Governor(
                budget or Budget(max_steps=None, max_sub_calls=None),
                ledger=self.ledger,
                question_id="session",
            )
            host = HostFunctions(self.governor, client, corpus=self.corpus).functions()
        self.functions = host | dict(functions or {})
        self.history: list[tuple[str, Any]] = []
        self.last_trajectory: Any = None
        self._stack: ExitStack | None = None
        self._sandbox: Any = None
        # absolute: the worker does not share this process's working directory
        self._store: Path | None = (
            self.corpus.path.resolve() if self.corpus is not None and self.corpus.path else None
        )
        self._tmp: tempfile.TemporaryDirectory | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def store_path(self) -> Path | None:
        """The store the worker maps; an in-memory corpus is saved once to a temp dir."""
        if self.corpus is not None and self._store is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="rlm-docs-session-")
            self._store = self.corpus.save(Path(self._tmp.name) / "store")
        return self._store

    @property
    def sandbox(self) -> Any:
        """The running `CorpusSandbox` (started on first use)."""
        if self._sandbox is None:
            from rlm_docs.repl import CorpusSandbox

            stack = ExitStack()
            kwargs: dict[str, Any] = {"corpus": self.store_path(), "functions": self.functions}
            if self.limits is not None:
                kwargs["limits"] = self.limits
            self._sandbox = stack.enter_context(CorpusSandbox(**kwargs))
            self._stack = stack
        return self._sandbox

    def close(self) -> None:
        """Stop the worker and remove any temporary store; the session can be run again."""
        if self._stack is not None:
            self._stack.close()
        self._stack = self._sandbox = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp, self._store = None, None

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the REPL ----------------------------------------------------------------------------

    def run(self, code: str) -> Any:
        """Run `code` in the worker; returns its `CellOutcome` (stdout, error, restarted)."""
        if not isinstance(code, str):
            raise ConfigError(f"Session.run: code must be a str, got {type(code).__name__}")
        result = self.sandbox.run(code)
        self.history.append((code, result))
        return result

    def get(self, name: str) -> Any:
        """A JSON-able copy of worker variable `name` (KeyError if undefined)."""
        return self.sandbox.get(name)

    def set(self, name: str, value: Any) -> None:
        """Bind a JSON-able `value` to `name` in the worker."""
        self.sandbox.set(name, value)

    def variables(self) -> dict[str, str]:
        """{name: short type/size description} of the worker's user variables."""
        return self.sandbox.variables()

    # -- asking ------------------------------------------------------------------------------

    def ask(
        self,
        question: str,
        *,
        model: Any = None,
        budget: Budget | None = None,
        log_dir: str | os.PathLike | None = None,
    ) -> Any:
        """`RLM(...).ask(question)` over this session's corpus (its own fresh sandbox), with
        calls recorded in this session's ledger; the trajectory is kept in `last_trajectory`
        and written, like `rlm-docs ask`'s, to `log_dir` (default `RLM_DOCS_HOME/runs`), so
        `TrajectoryView.from_file(prediction.trajectory)` and the viewer can open it later."""
        from rlm_docs.engine import RLM
        from rlm_docs.notebook.trajectory_view import TrajectoryView
        from rlm_docs.resources import home_dir

        if self.corpus is None:
            raise ConfigError("Session.ask: this session has no corpus")
        rlm = RLM(
            self.store_path(),
            model=model or self.model,
            budget=budget,
            limits=self.limits,
            ledger=self.ledger,
            log_dir=log_dir if log_dir is not None else home_dir() / "runs",
        )
        prediction = rlm.ask(question)
        self.last_trajectory = TrajectoryView(rlm.last_trajectory)
        return prediction

    # -- display -----------------------------------------------------------------------------

    def __repr__(self) -> str:
        what = repr(self.corpus) if self.corpus is not None else "no corpus"
        state = "running" if self._sandbox is not None else "not started"
        return f"<Session over {what}; worker {state}; {len(self.history)} cells run>"

    def _repr_html_(self) -> str:
        from html import escape

        from rlm_docs.notebook.display import corpus_text, wrap

        about = corpus_text(self.corpus) if self.corpus is not None else "no corpus"
        names = ", ".join(sorted(self.functions)) or "none"
        return wrap(
            f"<b>rlm-docs Session</b> — {escape(about)}<br>host functions: {escape(names)}; "
            f"{len(self.history)} cells run"
        )
