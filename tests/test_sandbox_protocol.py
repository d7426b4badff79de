"""Frames between host and worker, and the bounded output buffer."""

import contextlib
import os
import struct
import threading
import time

import pytest

from sandbox import protocol
from sandbox.output import Output


@pytest.fixture
def pipe():
    r, w = os.pipe()
    yield r, w
    for fd in (r, w):
        with contextlib.suppress(OSError):
            os.close(fd)


def test_frames_round_trip_including_surrogates(pipe):
    r, w = pipe
    reader = protocol.FrameReader(r)
    messages = [{"op": "run", "code": "print('é')"}, {"op": "value", "value": "\ud800"}]
    for m in messages:
        protocol.send(w, m)
    assert [reader.read(), reader.read()] == messages


def test_partial_frame_waits_for_the_rest(pipe):
    r, w = pipe
    reader = protocol.FrameReader(r)
    frame = protocol.encode({"op": "done", "stdout": "x" * 1000, "error": None})
    os.write(w, frame[:10])
    assert reader.read(time.monotonic() + 0.05) is None
    os.write(w, frame[10:])
    assert reader.read(time.monotonic() + 1) == {"op": "done", "stdout": "x" * 1000, "error": None}


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (struct.pack(">I", protocol.MAX_FRAME_BYTES + 1), "exceeds the limit"),
        (struct.pack(">I", 5) + b"nope!", "invalid JSON"),
        (struct.pack(">I", 2) + b"[]", "not an object"),
    ],
)
def test_bad_frames_are_protocol_errors(pipe, raw, problem):
    r, w = pipe
    os.write(w, raw)
    with pytest.raises(protocol.ProtocolError, match=problem):
        protocol.FrameReader(r).read(time.monotonic() + 1)


def test_closed_pipe_is_a_protocol_error(pipe):
    r, w = pipe
    os.close(w)
    with pytest.raises(protocol.ProtocolError, match="closed"):
        protocol.FrameReader(r).read()


def _select_calls(monkeypatch) -> list[float | None]:
    """The timeouts of every `select` the protocol module makes from now on."""
    calls: list[float | None] = []
    real = protocol.select.select

    def counted(r, w, x, timeout=None):
        calls.append(timeout)
        return real(r, w, x, timeout)

    monkeypatch.setattr(protocol.select, "select", counted)
    return calls


def test_a_spinning_reader_takes_a_frame_without_sleeping(pipe, monkeypatch):
    r, w = pipe
    calls = _select_calls(monkeypatch)
    protocol.send(w, {"op": "done", "stdout": "", "error": None})
    assert protocol.FrameReader(r).read(time.monotonic() + 1)["op"] == "done"
    assert len(calls) == 1  # the plain reader waits in select even for a frame already there
    calls.clear()
    protocol.send(w, {"op": "done", "stdout": "", "error": None})
    assert protocol.FrameReader(r, spin_s=0.001).read(time.monotonic() + 1)["op"] == "done"
    assert calls == []


def test_a_spinning_reader_sleeps_for_a_frame_that_comes_later(pipe, monkeypatch):
    r, w = pipe
    reader = protocol.FrameReader(r, spin_s=0.0001)
    calls = _select_calls(monkeypatch)
    frame = protocol.encode({"op": "done", "stdout": "late", "error": None})
    writer = threading.Timer(0.05, os.write, (w, frame))
    writer.start()
    assert reader.read(time.monotonic() + 5)["stdout"] == "late"
    writer.join()
    assert len(calls) == 1 and calls[0] > 1  # polled 0.1 ms, then slept until the frame
    assert reader.read(time.monotonic() + 0.01) is None  # nothing more: the deadline holds
    threading.Timer(0.05, os.write, (w, frame)).start()
    assert reader.read()["stdout"] == "late"  # no deadline: waits, as a blocking read would
    os.close(w)
    with pytest.raises(protocol.ProtocolError, match="closed"):
        reader.read(time.monotonic() + 1)


def test_output_keeps_everything_under_the_limit():
    out = Output(100)
    for part in ["a" * 30, "b" * 30, "c" * 40]:
        out.write(part)
    assert out.getvalue() == "a" * 30 + "b" * 30 + "c" * 40


def test_output_cuts_the_middle_with_a_marker():
    out = Output(100)
    for i in range(1000):
        out.write(f"{i:04d}\n")
    value = out.getvalue()
    assert value.startswith("0000\n0001\n")
    assert value.endswith("0998\n0999\n")
    # 10 lines of head and tail each survive; lines 11-990 of the 1,001 (last one empty) do not
    assert "\n[... 4,900 characters truncated: lines 11-990 of 1,001 not shown ...]\n" in value
    assert out.total == 5000


def test_the_marker_names_the_pages_that_were_cut():
    out = Output(400)
    for n in range(1, 41):
        out.write(f"=== ACME_2023_10K page {n} ===\nRevenue line {n}\n")
    value = out.getvalue()
    assert "lines 9-71 of 81 not shown, incl. pages ACME_2023_10K p.5-36 ...]" in value
    assert value.splitlines()[0] == "=== ACME_2023_10K page 1 ==="
