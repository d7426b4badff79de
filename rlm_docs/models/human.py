"""The `human` model: a person types the replies, so a study can record a human baseline whose
effort goes through the same governor, ledger, trajectories and reports as a model's.

The person sees each conversation's system prompt once, then every new request (the root's
turn prompt with the REPL feedback, or an `llm_query` prompt when `human` is the sub-model),
and types the reply: several lines, sent by a line holding only `.` or by Ctrl-D. On a
terminal the input is a prompt_toolkit editor (arrow keys move across lines); otherwise
lines come from `input()`, which is plain stdin in a pipe and the input box of a Jupyter
notebook. What is read and typed is counted with tiktoken (like the offline
model), the cost is $0 and the latency is the person's wall time, so budgets on steps, tokens
or wall time bind a person exactly as they bind a model.
"""

import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO

from rlm_docs.errors import ModelError
from rlm_docs.models.base import Completion, Usage
from rlm_docs.models.prices import FREE
from rlm_docs.terminal_text import sanitize
from rlm_docs.tokens import clip_tokens, count_message_tokens

SEND = "."
HOW_TO_SEND = (
    "Type your reply (code in ```repl``` blocks, FINAL(answer) on its own line to finish); "
    "send it with a line holding only '.' (or Ctrl-D)."
)

# Reads one reply (the lines typed before the sending `.`); None when input is closed.
Reader = Callable[[], str | None]


def read_plain(prompt: Callable[[str], str] = input) -> str | None:
    """Lines from `input()` until a line holding only `.` or end of input (None if nothing)."""
    lines: list[str] = []
    while True:
        try:
            line = prompt("")  # a prompt string would go to stdout, mixing with `--json`
        except EOFError:
            return "\n".join(lines) if lines else None
        if line.strip() == SEND:
            return "\n".join(lines)
        lines.append(line)


def read_terminal() -> str | None:
    """A multi-line prompt_toolkit editor: Enter on a lone `.` line or Ctrl-D sends."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.output import create_output

    keys = KeyBindings()

    @keys.add("enter")
    def _enter(event: Any) -> None:
        buffer = event.current_buffer
        doc = buffer.document
        if doc.current_line.strip() == SEND and doc.is_cursor_at_the_end:
            buffer.text = doc.text[: len(doc.text) - len(doc.current_line)].rstrip("\n")
            buffer.validate_and_handle()
        else:
            buffer.insert_text("\n")

    @keys.add("c-d")
    def _eof(event: Any) -> None:
        buffer = event.current_buffer
        if buffer.text:
            buffer.validate_and_handle()
        else:
            event.app.exit(exception=EOFError)

    session: PromptSession = PromptSession(
        multiline=True, key_bindings=keys, output=create_output(stdout=sys.stderr)
    )
    try:
        return session.prompt("> ", prompt_continuation="  ")
    except EOFError:
        return None


def default_reader() -> Reader:
    """prompt_toolkit on a terminal, `input()` otherwise (pipes, notebooks)."""
    if sys.stdin is not None and sys.stdin.isatty() and sys.stderr.isatty():
        return read_terminal
    return read_plain


class HumanClient:
    """A `Client` whose replies a person types (see module docstring); thread-safe.

    `name` labels the person in the ledger (`human:alice` -> "alice"); `reader` reads one
    reply (default: `default_reader()`, chosen per call); `out` is where requests are shown
    (default: stderr, so `--json` output on stdout stays clean).
    """

    backend = "human"
    price = FREE

    def __init__(
        self, name: str = "human", *, reader: Reader | None = None, out: TextIO | None = None
    ) -> None:
        self.model = name
        self.spec = "human" if name == "human" else f"human:{name}"
        self._reader = reader
        self._out = out
        self._shown_system: str | None = None
        self._requests = 0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"HumanClient(requests={self._requests})"

    def _write(self, text: str) -> None:
        out = self._out or sys.stderr
        out.write(text)
        out.flush()

    def _show(self, messages: list[dict]) -> None:
        """The system prompt once per conversation, then the newest message; their text comes
        from documents and model code, so terminal control sequences are removed first."""
        self._requests += 1
        system = messages[0]["content"] if messages and messages[0]["role"] == "system" else None
        if system is not None and system != self._shown_system:
            self._shown_system = system
            self._write(f"\n==== system prompt ====\n{sanitize(str(system))}\n")
        last = sanitize(str(messages[-1]["content"] if messages else ""))
        title = "turn" if system is not None else "request (sub-call or extraction)"
        self._write(f"\n==== {title} (request {self._requests}) ====\n{last}\n")
        self._write(f"\n---- {HOW_TO_SEND}\n")

    def complete(
        self,
        messages: list[dict],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        **params: Any,
    ) -> Completion:
        """Show the request, wait for the person's reply, account it like a model's."""
        del temperature, params  # a person has no sampling settings
        with self._lock:  # concurrent sub-calls are asked one after another
            start = time.perf_counter()
            self._show(messages)
            reader = self._reader or default_reader()
            text = reader()
            if text is None:
                raise ModelError("human: input was closed before a reply was sent")
            typed = text
            text, output_tokens = clip_tokens(text, max_tokens)
            if text != typed:
                self._write(f"[reply cut to the budget's {max_tokens} output tokens]\n")
            usage = Usage(count_message_tokens(messages), output_tokens, 0)
            return Completion(
                text=text,
                usage=usage,
                model=self.model,
                latency_s=time.perf_counter() - start,
                cost_usd=0.0,
                usage_source="tiktoken",
            )
