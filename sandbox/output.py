"""Bounded capture of what a cell prints: the head and the tail survive, the middle is cut.

Models print whole documents by accident; keeping only `limit` characters (half from the start,
half from the end) with a visible marker keeps the root model's context small while showing
where the output began and ended. Memory stays bounded whatever the cell prints.

The marker says what was cut, so a model knows what to print next: the number of characters,
the output lines left out, and the pages whose headers were in the cut part (the
`=== DOC page N ===` lines of `pages()` or the `[PAGE N]` markers of `context`), e.g.
`[... 31,200 characters truncated: lines 212-1,030 of 1,400 not shown, incl. pages
3M_2018_10K p.58-63 ...]`.
"""

import re

_PAGE_HEADER = re.compile(r"=== (\S+) page (\d+) ===|\[PAGE (\d+)\]")


class _CutPages:
    """First and last page header in the text that was cut, fed in stream order. A header
    split across two pieces is found through `carry` (the end of the text before)."""

    CARRY = 96

    def __init__(self) -> None:
        self.first: tuple[str, int] | None = None
        self.last: tuple[str, int] | None = None
        self.carry = ""

    def scan(self, text: str, lookahead: str = "") -> None:
        """Scan the cut `text`; a header starting in it may end in `lookahead`."""
        window = self.carry + text
        for m in _PAGE_HEADER.finditer(window + lookahead[: self.CARRY]):
            if m.start() >= len(window) or m.end() <= len(self.carry):
                continue  # starts after the cut text, or was seen with the text before
            found = (m.group(1) or "", int(m.group(2) or m.group(3)))
            self.first = self.first or found
            self.last = found
        self.carry = window[-self.CARRY :]

    def describe(self) -> str:
        if self.first is None or self.last is None:
            return ""
        (doc, a), (last_doc, b) = self.first, self.last
        where = f"{doc} p." if doc else "p."
        if (doc, a) == (last_doc, b):
            return f", incl. page {where}{a}"
        if doc == last_doc:
            return f", incl. pages {where}{a}-{b}"
        return f", incl. pages {where}{a} to {last_doc} p.{b}"


class Output:
    """A write-only text sink (usable as `sys.stdout`) that keeps head + tail of the text."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._head_room = limit // 2
        self._tail_room = limit - self._head_room
        self._head: list[str] = []
        self._head_len = 0
        self._tail: list[str] = []
        self._tail_len = 0
        self.total = 0
        self.lines = 0
        self._cut = _CutPages()

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        written = len(text)
        self.total += written
        self.lines += text.count("\n")
        if self._head_len < self._head_room:
            take = text[: self._head_room - self._head_len]
            self._head.append(take)
            self._head_len += len(take)
            text = text[len(take) :]
            if self._head_len >= self._head_room:  # a header cut at the head's end counts
                self._cut.carry = "".join(self._head)[-_CutPages.CARRY :]
        if text:
            if len(text) > self._tail_room:
                self._drop("".join(self._tail) + text[: -self._tail_room])
                self._tail, self._tail_len = [], 0
                text = text[-self._tail_room :]
            self._tail.append(text)
            self._tail_len += len(text)
            if self._tail_len > 2 * self._tail_room:
                joined = "".join(self._tail)
                self._drop(joined[: -self._tail_room])
                self._tail = [joined[-self._tail_room :]]
                self._tail_len = self._tail_room
        return written

    def _drop(self, text: str) -> None:
        """Text that fell out of the middle, in stream order."""
        self._cut.scan(text)

    def flush(self) -> None:
        """Nothing is buffered outside memory."""

    def getvalue(self) -> str:
        """The captured text, with a marker saying how much was cut from the middle."""
        head = "".join(self._head)
        tail = "".join(self._tail)[-self._tail_room :]
        cut = self.total - len(head) - len(tail)
        if cut <= 0:
            return head + tail
        joined = "".join(self._tail)
        self._cut.scan(joined[: len(joined) - len(tail)], tail)
        first = head.count("\n") + 1
        ends_line = self._cut.carry.endswith("\n")  # the cut ends where the tail's line starts
        last = self.lines - tail.count("\n") + (0 if ends_line else 1)
        lines = f"lines {first:,}-{last:,} of {self.lines + 1:,} not shown"
        return (
            f"{head}\n[... {cut:,} characters truncated: {lines}{self._cut.describe()} ...]\n{tail}"
        )


MARKER_SLACK = 200  # room for the "[... N characters truncated: ... ...]" marker


def bounded(text: str, limit: int) -> str:
    """`text` cut to about `limit` characters the same way (head + marker + tail); text already
    cut that way (at most `limit` plus a marker) is returned unchanged."""
    if len(text) <= limit + MARKER_SLACK:
        return text
    output = Output(limit)
    output.write(text)
    return output.getvalue()
