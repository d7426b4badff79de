"""IPython extension (`%load_ext rlm_docs`): try the model's sandbox and ask questions inline.

- `%rlm_corpus [PATH] [--model M]` opens this shell's session over a corpus store (default:
  the bundled demo corpus) and shows it.
- `%%rlm [-o NAME ...]` runs the cell in that session's sandbox (created on first use over
  the demo corpus), prints its output and error, and with `-o` copies worker variables back
  into the notebook namespace. The `CellOutcome` is kept in `_rlm`.
- `%rlm_ask [--model M] [--max-steps N] [--max-sub-calls N] [--max-cost USD] QUESTION` runs
  `RLM(...).ask` over the session's corpus and shows the prediction with the cited pages'
  text; the `Prediction` is kept in `_rlm_prediction`, its trajectory in `_rlm_trajectory`.
  `--model human` puts you in the root seat: each turn is shown and your reply is read from
  the notebook's input box (a line holding only `.` sends it).

User mistakes (bad path, bad flag) surface as one-line `UsageError`s, not tracebacks.
"""

import atexit
import sys
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from rlm_docs.errors import RlmDocsError, user_errors
from rlm_docs.governor import Budget
from rlm_docs.notebook.display import register, show
from rlm_docs.notebook.session import Session
from rlm_docs.number_flags import count, positive_float, positive_int


def demo_store() -> Any:
    """The bundled demo corpus store (built under RLM_DOCS_HOME on first use)."""
    from rlm_docs.ingest.demo import demo_corpus_path

    return demo_corpus_path()


@magics_class
class RlmMagics(Magics):
    """The magics of one IPython shell, sharing one `Session`."""

    def __init__(self, shell: Any) -> None:
        super().__init__(shell)
        self.session: Session | None = None
        atexit.register(self.close)

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None

    def open(self, path: Any = None, model: str | None = None) -> Session:
        """Replace this shell's session with one over `path` (default: the demo corpus)."""
        try:
            session = Session(path if path is not None else demo_store(), model=model)
        except RlmDocsError as exc:
            raise UsageError(str(exc)) from None
        self.close()
        self.session = session
        return session

    def current(self) -> Session:
        return self.session if self.session is not None else self.open()

    def _user_ns(self) -> dict[str, Any]:
        """The notebook's namespace (magics run only inside a shell)."""
        assert self.shell is not None
        namespace: dict[str, Any] = self.shell.user_ns
        return namespace

    @magic_arguments()
    @argument("path", nargs="?", help="corpus store directory (default: the demo corpus)")
    @argument("--model", help="model for llm_query in %%rlm cells and for %rlm_ask")
    @line_magic
    def rlm_corpus(self, line: str) -> None:
        """Open the session's corpus: `%rlm_corpus [PATH] [--model M]`."""
        args = parse_argstring(self.rlm_corpus, line)
        session = self.open(args.path, args.model)
        display(show(session.corpus))

    @magic_arguments()
    @argument(
        "-o",
        "--out",
        action="append",
        default=[],
        metavar="NAME",
        help="copy worker variable NAME into the notebook namespace (repeatable)",
    )
    @cell_magic
    def rlm(self, line: str, cell: str) -> None:
        """Run the cell in the sandbox: `%%rlm [-o NAME ...]`."""
        args = parse_argstring(self.rlm, line)
        session = self.current()
        try:
            result = session.run(cell)
        except user_errors() as exc:  # the sandbox did not start (bad store, too little memory)
            raise UsageError(str(exc)) from None
        self._user_ns()["_rlm"] = result
        if result.stdout:
            sys.stdout.write(result.stdout)
        if result.error:
            sys.stderr.write(result.error.rstrip("\n") + "\n")
        if result.restarted:
            sys.stderr.write("[the sandbox worker was restarted: its variables are gone]\n")
        for name in args.out:
            try:
                self._user_ns()[name] = session.get(name)
            except KeyError:
                raise UsageError(f"%%rlm -o {name}: no such variable in the sandbox") from None

    @magic_arguments()
    @argument(
        "--model",
        help="root model (default: the session's, else RLM_DOCS_MODEL/offline); human: you reply",
    )
    @argument("--max-steps", type=positive_int, help="root steps budget")
    @argument("--max-sub-calls", type=count, help="sub-call budget")
    @argument("--max-cost", type=positive_float, help="dollar budget")
    @argument("question", nargs="+", help="the question")
    @line_magic
    def rlm_ask(self, line: str) -> None:
        """Ask a question over the session's corpus: `%rlm_ask [options] QUESTION`."""
        args = parse_argstring(self.rlm_ask, line)
        session = self.current()
        limits = {
            k: v
            for k, v in (
                ("max_steps", args.max_steps),
                ("max_sub_calls", args.max_sub_calls),
                ("max_cost_usd", args.max_cost),
            )
            if v is not None
        }
        try:
            budget = Budget(**limits)
            prediction = session.ask(" ".join(args.question), model=args.model, budget=budget)
        except RlmDocsError as exc:
            raise UsageError(str(exc)) from None
        self._user_ns()["_rlm_prediction"] = prediction
        self._user_ns()["_rlm_trajectory"] = session.last_trajectory
        display(show(prediction, corpus=session.corpus))


def load_ipython_extension(ipython: Any) -> None:
    """Register the magics and the rich views with `ipython` (called by `%load_ext rlm_docs`)."""
    ipython.register_magics(RlmMagics)
    register(ipython)
