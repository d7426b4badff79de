"""Bounded capture of what a cell prints: the head and the tail survive, the middle is cut.

Models print whole documents by accident; keeping only `limit` characters (half from the start,
half from the end) with a visible marker keeps the root model's context small while showing
where the output began and ended. Memory stays bounded whatever the cell prints.
"""


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

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        written = len(text)
        self.total += written
        if self._head_len < self._head_room:
            take = text[: self._head_room - self._head_len]
            self._head.append(take)
            self._head_len += len(take)
            text = text[len(take) :]
        if text:
            text = text[-self._tail_room :]
            self._tail.append(text)
            self._tail_len += len(text)
            if self._tail_len > 2 * self._tail_room:
                joined = "".join(self._tail)[-self._tail_room :]
                self._tail = [joined]
                self._tail_len = len(joined)
        return written

    def flush(self) -> None:
        """Nothing is buffered outside memory."""

    def getvalue(self) -> str:
        """The captured text, with a marker saying how much was cut from the middle."""
        head = "".join(self._head)
        tail = "".join(self._tail)[-self._tail_room :]
        cut = self.total - len(head) - len(tail)
        if cut <= 0:
            return head + tail
        return f"{head}\n[... {cut} characters truncated ...]\n{tail}"


MARKER_SLACK = 64  # room for the "[... N characters truncated ...]" marker


def bounded(text: str, limit: int) -> str:
    """`text` cut to about `limit` characters the same way (head + marker + tail); text already
    cut that way (at most `limit` plus a marker) is returned unchanged."""
    if len(text) <= limit + MARKER_SLACK:
        return text
    output = Output(limit)
    output.write(text)
    return output.getvalue()
