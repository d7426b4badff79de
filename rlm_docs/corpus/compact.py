"""Compact page text: what the sandbox helpers return unless asked for the raw text.

pdftotext's layout mode pads every line to the page width: centred headings start after forty
spaces and table cells sit apart by runs of twenty. A model pays for every one of those spaces
and, in real-model runs, collapsed them by hand before printing. Compact text
keeps what the layout means and drops the padding: leading and trailing spaces go, a run of two
or more spaces (or tabs) inside a line becomes exactly two spaces, so table columns stay
apart and a single space still joins words, and runs of blank lines become one blank line.
Line order and line breaks are kept, so a grep hit's line number points into compact text.

A page with no extractable text (a scanned page or a figure without a text layer) is shown as
`NO_TEXT`, so an empty result is never mistaken for a failed read.
"""

import re

NO_TEXT = "[no text on this page: a scan or an image without a text layer]"
_GAP = re.compile(r"[ \t\u00a0]{2,}")
_BLANKS = re.compile(r"\n{3,}")


def compact(text: str) -> str:
    """`text` with layout padding removed (see module docstring); NO_TEXT if it has none."""
    lines = [_GAP.sub("  ", line.strip(" \t\u00a0")) for line in text.splitlines()]
    out = _BLANKS.sub("\n\n", "\n".join(lines)).strip("\n")
    return out if out.strip() else NO_TEXT
