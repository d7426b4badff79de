"""When each part of a recorded turn happened, for readers that place it on a clock
(Inspect logs, OpenTelemetry spans).

A trajectory stores each turn's start (`timestamp`) and length (`iteration_time`), each cell's
`execution_time`, and each sub-call's ledger entry (`started_at`, `latency_s`). The root call
comes first in a turn and its cells run one after another once it returns, so the call took
the turn's time less its cells' and each cell starts where the one before ended. A turn without
a timestamp starts where the previous one ended.
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
    for seconds in durations:
        cells.append(Span(at, at + timedelta(seconds=seconds)))
        at = cells[-1].end
    end = max(start + timedelta(seconds=took), at)
    return TurnTimes(Span(start, end), Span(start, call_end), cells)


def sub_call_time(call: SubCall, fallback: datetime) -> Span:
    """A sub-call's interval from its ledger entry (`fallback` as start without one)."""
    ledger = call.ledger or {}
    started = ledger.get("started_at")
    start = datetime.fromtimestamp(float(started), UTC) if started else fallback
    took = float(ledger.get("latency_s") or call.execution_time or 0.0)
    return Span(start, start + timedelta(seconds=max(0.0, took)))
