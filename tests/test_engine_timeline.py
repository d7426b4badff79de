"""`engine.timeline`: where a recorded turn's root call, cells and sub-calls sit on the clock.

The turn's length less its cells' is only an estimate of the root call's (host work after the
cells counts in the turn too, and more so on a loaded machine); a sub-call's ledger time is
measured, so the cell holding it is moved to contain it."""

from datetime import UTC, datetime, timedelta

from rlm_docs.engine.records import CellResult, CodeBlock, Iteration, SubCall
from rlm_docs.engine.timeline import turn_times

T0 = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def _turn(sub_call_at: float) -> Iteration:
    call = SubCall(
        prompt="q",
        response="a",
        ledger={"started_at": (T0 + timedelta(seconds=sub_call_at)).timestamp(), "latency_s": 0.1},
    )
    cell = CodeBlock(
        code="x = llm_query('q')", result=CellResult(execution_time=0.2, sub_calls=[call])
    )
    # 1 s turn, 0.2 s cell: the estimate puts the cell at 0.8-1.0 s
    return Iteration(iteration=1, timestamp=T0.isoformat(), iteration_time=1.0, code_blocks=[cell])


def test_estimate_when_nothing_was_measured_inside():
    it = _turn(0.85)
    times = turn_times(it, T0)
    (cell,) = times.cells
    assert cell.start == T0 + timedelta(seconds=0.8) and cell.end == T0 + timedelta(seconds=1.0)
    assert times.root_call.end == cell.start and times.turn.end == T0 + timedelta(seconds=1)


def test_a_cell_holds_its_measured_sub_calls_and_follows_the_root_call():
    times = turn_times(_turn(0.5), T0)  # the sub-call began before the estimated cell start
    (cell,) = times.cells
    sub_start = T0 + timedelta(seconds=0.5)
    assert cell.start <= sub_start and cell.end >= sub_start + timedelta(seconds=0.1)
    assert times.root_call.start == T0 and times.root_call.end <= cell.start
    assert times.turn.start <= cell.start and cell.end <= times.turn.end
