"""When each part of a recorded turn happened, for readers that place it on a clock
(Inspect logs, OpenTelemetry spans).

A trajectory stores each turn's start (`timestamp`) and length (`iteration_time`), each cell's
`execution_time`, and each sub-call's ledger entry (`started_at`, `latency_s`). The root call
comes first in a turn and its cells run one after another once it returns, so the call took
the turn's time less its cells' and each cell starts where the one before ended. That estimate
is then corrected by what was measured on the clock: a cell holds its sub-calls (and a child
run its turns), so a cell starts no later than its first sub-call and ends no earlier than its
last, and the root call ends before the first cell starts. A turn without a timestamp starts
where the previous one ended.
"""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from rlm_docs.engine.records import Iteration, SubCall, Trajectory


@dataclass(frozen=True)
class Span:
    start: datetime
    end: datetime

    @property
    def seconds(self) -> float:
        return (self.end - self.start).total_seconds()


@dataclass(frozen=True)
class TurnTimes:
    """A turn, its root call, and its cells in order."""

    turn: Span
    root_call: Span
    cells: list[Span]


def parse_time(stamp: str | None) -> datetime | None:
    """An ISO timestamp of a record, or None when absent or unreadable."""
    try:
        return datetime.fromisoformat(stamp) if stamp else None
    except ValueError:
        return None


def run_start(trajectory: Trajectory) -> datetime | None:
    """When the run's first turn began (its metadata's time when no turn has one)."""
    for it in trajectory.iterations:
        when = parse_time(it.timestamp)
        if when is not None:
            return when
    return parse_time(trajectory.metadata.timestamp)


def turn_times(it: Iteration, previous_end: datetime) -> TurnTimes:
    start = parse_time(it.timestamp) or previous_end
    took = max(0.0, float(it.iteration_time or 0.0))
    durations = [max(0.0, float(b.result.execution_time or 0.0)) for b in it.code_blocks]
    call_end = start + timedelta(seconds=max(0.0, took - sum(durations)))
    cells: list[Span] = []
    at = call_end
    for block, seconds in zip(it.code_blocks, durations, strict=True):
        cell = Span(at, at + timedelta(seconds=seconds))
        measured = [sub_call_time(call, cell.start) for call in block.result.sub_calls]
        if measured:
            cell = Span(
                max(start, min([cell.start, *(m.start for m in measured)])),
                max([cell.end, *(m.end for m in measured)]),
            )
        cells.append(cell)
        at = cell.end
    call_end = min([call_end, *(c.start for c in cells)])
    end = max(start + timedelta(seconds=took), at)
    return TurnTimes(Span(start, end), Span(start, call_end), cells)


def sub_call_time(call: SubCall, fallback: datetime) -> Span:
    """A sub-call's interval from its ledger entry (`fallback` as start without one); a child
    run's interval also covers its own turns."""
    ledger = call.ledger or {}
    started = ledger.get("started_at")
    start = datetime.fromtimestamp(float(started), UTC) if started else fallback
    took = float(ledger.get("latency_s") or call.execution_time or 0.0)
    span = Span(start, start + timedelta(seconds=max(0.0, took)))
    if call.child is None:
        return span
    end = span.end
    for it in call.child.iterations:
        end = max(end, turn_times(it, end).turn.end)
    child_start = run_start(call.child)
    return Span(min(span.start, child_start) if child_start else span.start, end)
