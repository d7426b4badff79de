"""The axes of effort, each declared once: what it is called, in what unit, how its usage is read
and whether a budget can limit it.

Everything that counts, limits, records or shows effort is derived from `AXES`: the governor's
accounting and refusals, refusal messages, the prediction's and results row's effort fields,
the report's Kuiper table, the notebook, serve's wire format, the viewer's run totals and the
`ask` summary line. Adding a measure is one `Axis` here; readers look `AXES` up when they run
(never a copy taken at import), so a measure added at run time (a test, a plug-in) is seen by
all of them.

How an axis is read (`source`):
- `call`: summed over a question's finished model calls, `read(completion, role)` each;
- `steps`: root steps, counted by the governor (`Governor.step`, and root calls for the record);
- `clock`: seconds since the question started;
- `depth`: the deepest `rlm_query` level reached;
- `derived`: computed from the other fields of a record (`derive(record)`);
- `decomposition`: read from the question's decomposition (pages read), not from the governor.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from rlm_docs.models.base import Completion

Source = Literal["call", "steps", "clock", "depth", "derived", "decomposition"]
Unit = Literal["count", "tokens", "usd", "seconds"]


@dataclass(frozen=True)
class Axis:
    """One axis of effort (see the module docstring)."""

    name: str
    """Its field in governor totals, predictions and results rows (`input_tokens`)."""
    noun: str
    """Its human name, plural, in notices, tables and figures (`input tokens`)."""
    label: str
    """The adjective of refusal messages (`input-token budget exhausted`)."""
    unit: Unit
    """How amounts are shown: a count, tokens, dollars ($0.1234) or seconds (12.3s)."""
    source: Source
    """How usage is read (see the module docstring)."""
    read: Callable[[Completion, str], float] | None = None
    """For `call` axes: what one finished call of the given role adds."""
    derive: Callable[[Mapping[str, Any]], float] | None = None
    """For `derived` axes: the value from a record's other fields."""
    limit: str | None = None
    """The `Budget` field that limits it, or None when it cannot be a limit."""
    scale: int = 1
    """Whole units the governor counts in per unit (nano-dollars: integer sums are exact)."""
    recorded: bool = True
    """A field of every prediction and results row (else only in governor totals)."""
    measure: bool = True
    """Compared across questions and runs as an effort (bootstrap intervals, the report's
    effort columns and figures, Kuiper in the comparison table)."""
    kuiper: bool | None = None
    """In the report's per-measure Kuiper table (default: `measure`)."""
    figure: bool = False
    """Drawn in the report's calibration curves and effort distributions (the comparison
    table's Kuiper measures)."""
    budget_name: str | None = None
    """Its name in budget data and refusals when not `name` (`depth` for `max_depth`)."""
    flag: str | None = None
    """For a limit: its command-line flag (`--max-steps`); its help is `flag_help` plus the
    `Budget` default (`rlm_docs.cli.flags`)."""
    flag_help: str = ""
    """What the flag's number counts, for `--help` (`root turns`)."""
    zero_allowed: bool = False
    """For a limit: 0 is a valid limit (none of it at all) rather than a mistake."""

    @property
    def key(self) -> str:
        """The axis's name in budget data (`remaining()`) and refusals (`BudgetExceeded.axis`)."""
        return self.budget_name or self.name

    def format(self, value: float) -> str:
        """Human form of an amount ($0.1234, 12.3s, 41,000)."""
        if self.unit == "usd":
            return f"${value:,.4f}"
        if self.unit == "seconds":
            return f"{value:,.1f}s"
        return f"{int(value):,}"

    def brief(self, value: float) -> str:
        """`value` with its name, for one-line summaries (`3 root steps`, `$0.0012`, `1.2s`)."""
        if self.unit in ("usd", "seconds"):
            return self.format(value)
        name = self.noun[:-1] if value == 1 and self.noun.endswith("s") else self.noun
        return f"{self.format(value)} {name}"

    def ticks(self, value: float) -> int:
        """`value` in the governor's whole units."""
        return round(value * self.scale)

    def amount(self, ticks: float) -> float:
        """Whole units back to the axis's unit (an int stays an int at scale 1)."""
        return ticks if self.scale == 1 else ticks / self.scale


def _is_sub(_: Completion, role: str) -> float:
    return int(role == "sub")


AXES: tuple[Axis, ...] = (
    Axis(
        "steps",
        "root steps",
        "root-step",
        "count",
        "steps",
        limit="max_steps",
        figure=True,
        flag="--max-steps",
        flag_help="root turns",
    ),
    Axis(
        "sub_calls",
        "sub-calls",
        "sub-call",
        "count",
        "call",
        _is_sub,
        limit="max_sub_calls",
        flag="--max-sub-calls",
        flag_help="sub-model calls",
        zero_allowed=True,
    ),
    Axis(
        "pages_looked",
        "pages read",
        "page",
        "count",
        "decomposition",
        recorded=False,
        measure=False,
        kuiper=True,
    ),
    Axis(
        "input_tokens",
        "input tokens",
        "input-token",
        "tokens",
        "call",
        lambda c, _: c.usage.input_tokens,
        limit="max_input_tokens",
        flag="--max-input-tokens",
        flag_help="input tokens, all calls",
    ),
    Axis(
        "output_tokens",
        "output tokens",
        "output-token",
        "tokens",
        "call",
        lambda c, _: c.usage.output_tokens,
        limit="max_output_tokens",
        flag="--max-output-tokens",
        flag_help="output tokens",
    ),
    Axis(
        "total_tokens",
        "total tokens",
        "total-token",
        "tokens",
        "derived",
        derive=lambda r: (r.get("input_tokens") or 0) + (r.get("output_tokens") or 0),
        recorded=False,
        figure=True,
    ),
    Axis(
        "cached_tokens",
        "cache-read tokens",
        "cache-read-token",
        "tokens",
        "call",
        lambda c, _: c.usage.cached_tokens,
        recorded=False,
        measure=False,
    ),
    Axis(
        "cache_write_tokens",
        "cache-write tokens",
        "cache-write-token",
        "tokens",
        "call",
        lambda c, _: c.usage.cache_write_tokens,
        recorded=False,
        measure=False,
    ),
    Axis(
        "cost_usd",
        "dollars",
        "dollar",
        "usd",
        "call",
        lambda c, _: c.cost_usd,
        limit="max_cost_usd",
        flag="--max-cost",
        flag_help="dollars",
        scale=1_000_000_000,
        measure=False,
        kuiper=True,
    ),
    Axis(
        "wall_s",
        "wall time",
        "wall-time",
        "seconds",
        "clock",
        limit="max_wall_s",
        flag="--max-wall",
        flag_help="wall-clock seconds",
    ),
    Axis(
        "max_depth",
        "recursion depth",
        "recursion-depth",
        "count",
        "depth",
        limit="max_depth",
        measure=False,
        budget_name="depth",
        flag="--max-depth",
        flag_help="recursion depth of rlm_query",
        zero_allowed=True,
    ),
)
"""Every axis, in the order tables and records show them."""


def axes() -> tuple[Axis, ...]:
    """`AXES` as it is now (looked up at call time; see the module docstring)."""
    return AXES


def axis(key: str) -> Axis | None:
    """The axis named `key` (its field name or its budget name), or None."""
    return next((a for a in AXES if key in (a.name, a.key)), None)


def call_axes() -> tuple[Axis, ...]:
    """Axes summed over a question's model calls (the governor's running totals)."""
    return tuple(a for a in AXES if a.source == "call")


def recorded() -> tuple[str, ...]:
    """The effort fields of every prediction and results row, in order."""
    return tuple(a.name for a in AXES if a.recorded)


def measures() -> tuple[Axis, ...]:
    """The effort measures runs and questions are compared on (`Axis.measure`)."""
    return tuple(a for a in AXES if a.measure)


def kuiper_measures() -> tuple[Axis, ...]:
    """The measures of the report's per-measure Kuiper table (`Axis.kuiper`): calibration can
    differ per axis, so pages read and dollars are there too."""
    return tuple(a for a in AXES if (a.measure if a.kuiper is None else a.kuiper))


def figure_measures() -> tuple[Axis, ...]:
    """The measures of the report's calibration and distribution figures (`Axis.figure`)."""
    return tuple(a for a in AXES if a.figure)


def limits() -> tuple[Axis, ...]:
    """Axes a budget can limit."""
    return tuple(a for a in AXES if a.limit is not None)


def noun(key: str) -> str:
    """The human name of axis `key`, or `key` itself for an unknown one."""
    found = axis(key)
    return found.noun if found is not None else key


def format_amount(key: str, value: float) -> str:
    """Human form of an amount on axis `key` ($0.1234, 12.3s, 41,000)."""
    found = axis(key)
    return found.format(value) if found is not None else f"{int(value):,}"
