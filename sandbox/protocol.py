"""Length-prefixed JSON frames between the host and the sandbox worker.

Each frame is a 4-byte big-endian length followed by that many bytes of UTF-8 JSON (one object
with an `op` key). JSON, never pickle: the host must not run anything the worker could forge.
The frames travel over two dedicated pipes (passed with `pass_fds`), not the worker's stdio.

Every request carries an `id` that the worker copies into each frame it sends while serving
that request (its `call`s and its final reply); the host restarts a worker that sends a frame
with another id, an unexpected `op`, or anything between requests.

Host -> worker:
  {"op": "run", "code": str}                 run a cell
  {"op": "get", "name": str}                 JSON-able copy of a variable
  {"op": "set", "name": str, "value": any}   bind a JSON value
  {"op": "vars"}                             describe user variables
  {"op": "log", "name": str}                 copy of a preload log (e.g. pages the corpus
                                             helpers read)
  {"op": "return", "value": any}             reply to a worker "call"
  {"op": "raise", "type": str, "message": str}  a host function raised
Worker -> host:
  {"op": "ready", "security": {...}}         worker started and confined
  {"op": "fatal", "message": str}            worker could not start (e.g. bad limits)
  {"op": "call", "name": str, "args": [...], "kwargs": {...}}  host function RPC
  {"op": "done", "stdout": str, "error": str | None}  end of a cell
  {"op": "value", "value": any}              reply to get / set / vars / log
  {"op": "error", "type": str, "message": str}  get / set / vars failed
"""

import json
import os
import select
import struct
import time
from typing import Any

_HEADER = struct.Struct(">I")
MAX_FRAME_BYTES = 256 * 1024 * 1024
# A host-function call's arguments (an `llm_query` prompt, a batch): room for the largest
# prompt the governor accepts (2M characters, up to ~6 MB of UTF-8), so the host never has to
# read and decode more than that for one call; a bigger batch must be split.
MAX_CALL_BYTES = 8 * 1024 * 1024
# One read takes at most what a pipe holds (64 KiB by default). A bigger buffer only costs:
# `os.read` allocates its full size before the kernel fills a few bytes of it.
READ_BYTES = 64 * 1024


class ProtocolError(Exception):
    """The peer closed the pipe or sent something that is not a valid frame."""


def encode(message: dict[str, Any]) -> bytes:
    """One frame: length prefix + compact JSON (raises TypeError for non-JSON values)."""
    text = json.dumps(message, separators=(",", ":"), ensure_ascii=False)
    try:
        body = text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: ASCII escapes carry them exactly
        body = json.dumps(message, separators=(",", ":")).encode("ascii")
    if len(body) > MAX_FRAME_BYTES:
        raise ValueError(
            f"message of {len(body)} bytes exceeds the {MAX_FRAME_BYTES} byte frame limit"
        )
    return _HEADER.pack(len(body)) + body


def send(fd: int, message: dict[str, Any], deadline: float | None = None) -> None:
    """Write one frame (see `send_bytes`)."""
    send_bytes(fd, encode(message), deadline)


def send_bytes(fd: int, frame: bytes, deadline: float | None = None) -> None:
    """Write an already encoded frame. With a `deadline` (a monotonic time; the fd must be
    non-blocking) raise TimeoutError if the reader does not take it in time, so a peer that
    stops reading cannot block the writer forever. The write is tried first and `select`
    waits only when the pipe is full: a request fits the empty pipe of an idle worker."""
    data = memoryview(frame)
    while data:
        remaining = None if deadline is None else deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            raise TimeoutError("the peer did not read the frame in time")
        try:
            written = os.write(fd, data)
        except BlockingIOError:  # the pipe is full: wait for the reader until the deadline
            if not select.select([], [fd], [], remaining)[1]:
                raise TimeoutError("the peer did not read the frame in time") from None
            continue
        data = data[written:]


class FrameReader:
    """Buffered frame reader over a raw pipe fd, with an optional deadline per frame.

    With `spin_s`, a read with a deadline first polls the pipe for up to that long before it
    sleeps in `select` (the fd is made non-blocking). A reader that sleeps has to be woken by
    the writer's CPU, and on a virtual machine waking an idle virtual CPU costs tens of
    microseconds on each side of a round trip: more than a trivial request itself. Polling
    keeps this CPU awake while a quick reply is on its way, at the price of at most `spin_s`
    of CPU per frame (the trade a spin-then-park lock makes)."""

    def __init__(self, fd: int, spin_s: float = 0.0) -> None:
        self.fd = fd
        self._buf = bytearray()
        self.spin_s = spin_s
        if spin_s:
            os.set_blocking(fd, False)

    def _fill(self, deadline: float | None) -> bool:
        """Read more bytes; False if the deadline passed first. Raises ProtocolError on EOF."""
        chunk = self._spin(deadline) if self.spin_s else None
        if chunk is None:
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not select.select([self.fd], [], [], remaining)[0]:
                    return False
            elif self.spin_s:  # a non-blocking fd: wait for data as a blocking read would
                select.select([self.fd], [], [])
            chunk = os.read(self.fd, READ_BYTES)
        if not chunk:
            raise ProtocolError("pipe closed")
        self._buf += chunk
        return True

    def _spin(self, deadline: float | None) -> bytes | None:
        """What the pipe yields within `spin_s` (b"" at EOF), None if nothing came."""
        end = time.monotonic() + self.spin_s
        if deadline is not None:
            end = min(end, deadline)
        while True:
            try:
                return os.read(self.fd, READ_BYTES)
            except BlockingIOError:
                if time.monotonic() >= end:
                    return None

    def pending(self) -> bool:
        """Whether bytes (or EOF) are waiting before any request asked for them."""
        return bool(self._buf) or bool(select.select([self.fd], [], [], 0)[0])

    def read(self, deadline: float | None = None) -> dict[str, Any] | None:
        """The next frame, or None if `deadline` (a monotonic time) passes first."""
        while len(self._buf) < _HEADER.size:
            if not self._fill(deadline):
                return None
        (size,) = _HEADER.unpack_from(self._buf)
        if size > MAX_FRAME_BYTES:
            raise ProtocolError(f"frame of {size} bytes exceeds the limit")
        while len(self._buf) < _HEADER.size + size:
            if not self._fill(deadline):
                return None
        body = bytes(self._buf[_HEADER.size : _HEADER.size + size])
        del self._buf[: _HEADER.size + size]
        try:
            message = json.loads(body)
        except ValueError as exc:
            raise ProtocolError(f"invalid JSON frame: {exc}") from None
        except RecursionError:  # nesting deeper than this process's stack allows
            raise ProtocolError("frame nested too deeply") from None
        if not isinstance(message, dict) or not isinstance(message.get("op"), str):
            raise ProtocolError("frame is not an object with an 'op'")
        return message
