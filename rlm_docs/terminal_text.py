"""Text from models and documents made safe to print on a terminal.

A document or a prompt-injected model can write escape sequences that a terminal obeys: set
the window title (OSC 0/2), plant a hyperlink whose target differs from its text (OSC 8), clear
the screen or hide the text that follows (CSI), or worse. `sanitize` removes every such sequence
(CSI, OSC, DCS/SOS/PM/APC strings, other ESC sequences, their 8-bit C1 forms) and every other
C0/C1 control character except newline and tab, in one linear pass. An unterminated string
sequence (OSC, DCS, ...) ends at the line's end, so it cannot hide the rest of the text. The
rich `console()` every command (and the eval progress display) prints through applies it to
every string before rich parses it, table cells and titles included; `json_text` does the same
job for JSON printed raw, by escaping. Rich markup is a second language inside those strings (a
file named `[link=https://evil.example]report.md` becomes a clickable link), so names and other
document or model text put into a markup string are escaped with `rich.markup.escape`. It sits
below the CLI because the `human` model client and the eval runner print to the terminal too.
"""

import json
import re
import sys
from typing import Any

_CONTROL = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"  # CSI ... final byte (also when cut short)
    r"|\x1b\][^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?"  # OSC ... BEL/ST (titles, OSC 8 links)
    r"|\x1b[PX^_][^\x1b\x9c\n]*(?:\x1b\\|\x9c)?"  # DCS / SOS / PM / APC strings ... ST
    r"|\x1b[ -/]*[0-~]?"  # any other ESC sequence
    r"|\x9b[0-?]*[ -/]*[@-~]?"  # 8-bit CSI
    r"|\x9d[^\x07\x1b\x9c\n]*(?:\x07|\x9c)?"  # 8-bit OSC
    r"|[\x90\x98\x9e\x9f][^\x1b\x9c\n]*(?:\x1b\\|\x9c)?"  # 8-bit DCS / SOS / PM / APC
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"  # every other control character but \t and \n
)
_JSON_UNSAFE = re.compile(r"[\x7f-\x9f]")  # json.dumps already escapes C0 controls


def sanitize(text: str) -> str:
    """`text` without terminal control sequences or control characters (\\n and \\t kept)."""
    return _CONTROL.sub("", text)


def json_text(value: Any, **kwargs: Any) -> str:
    """`json.dumps(value, ensure_ascii=False, **kwargs)` with DEL and C1 controls escaped too,
    so the JSON means the same but a terminal shown it obeys nothing."""
    text = json.dumps(value, ensure_ascii=False, **kwargs)
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def console(stderr: bool = False) -> Any:
    """A rich `Console` on stdout (or stderr) that strips terminal control sequences from every
    string it renders (`sanitize`, in `render_str`: printed strings, table cells, titles) and
    never inserts line breaks of its own (`soft_wrap`: rich would otherwise hard-wrap long
    errors, paths and answers at the terminal width, or at 80 columns when piped, and break
    `grep` on logs). No highlighting: numbers in answers keep the user's colours. Rich is
    imported here, not at CLI start-up."""
    from rich.console import Console

    class SafeConsole(Console):
        def render_str(self, text: str, **kwargs: Any) -> Any:
            return super().render_str(sanitize(text), **kwargs)

        def on_broken_pipe(self) -> None:
            # rich would exit 1; the CLI turns this into the 141 of `... | head` (cli.main)
            self.quiet = True
            raise BrokenPipeError

    return SafeConsole(file=sys.stderr if stderr else sys.stdout, highlight=False, soft_wrap=True)
