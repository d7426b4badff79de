"""The one way CLI commands print with rich.

`soft_wrap=True`: rich would otherwise hard-wrap every line at the terminal width, or at 80
columns when the output is piped, splitting long error messages, paths and answers across lines
(and breaking `grep` on logs). No highlighting: numbers in answers keep the user's colours.
Every string printed goes through `terminal.sanitize`: answers, code, REPL output and page
text come from models and documents, and must not drive the terminal.
"""

import sys
from typing import Any

from rlm_docs.terminal_text import sanitize


def console(stderr: bool = False) -> Any:
    """A rich `Console` on stdout (or stderr) that never inserts line breaks of its own and
    strips terminal control sequences from every string it prints (rich is imported here, not
    at CLI start-up)."""
    from rich.console import Console

    class SafeConsole(Console):
        def print(self, *objects: Any, **kwargs: Any) -> None:
            clean = [sanitize(o) if isinstance(o, str) else o for o in objects]
            super().print(*clean, **kwargs)

        def on_broken_pipe(self) -> None:
            # rich would exit 1; the CLI turns this into the 141 of `... | head` (cli.main)
            self.quiet = True
            raise BrokenPipeError

    return SafeConsole(file=sys.stderr if stderr else sys.stdout, highlight=False, soft_wrap=True)
