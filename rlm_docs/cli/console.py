"""The one way CLI commands print with rich.

`soft_wrap=True`: rich would otherwise hard-wrap every line at the terminal width, or at 80
columns when the output is piped, splitting long error messages, paths and answers across lines
(and breaking `grep` on logs). No highlighting: numbers in answers keep the user's colours.
"""

import sys
from typing import Any


def console(stderr: bool = False) -> Any:
    """A rich `Console` on stdout (or stderr) that never inserts line breaks of its own (rich
    is imported here, not at CLI start-up)."""
    from rich.console import Console

    return Console(file=sys.stderr if stderr else sys.stdout, highlight=False, soft_wrap=True)
