"""The one error a budget refusal raises, worded for the model that has to react to it."""

from typing import Any

from rlm_docs.errors import RlmDocsError
from rlm_docs.governor.axes import axis as find_axis
from rlm_docs.governor.axes import format_amount


def label(axis: str) -> str:
    """The adjective of a refusal on `axis` (`input-token budget exhausted`)."""
    found = find_axis(axis)
    return found.label if found is not None else axis


class BudgetExceeded(RlmDocsError):
    """A hard limit refused a call; `axis` is a limit axis's `Axis.key` (`governor.axes`).

    `needed` is what the refused call would have taken on that axis; `what` names the call when
    it is not a single model call (a batch, a child run), so the message says what was refused.
    """

    def __init__(
        self,
        axis: str,
        limit: float,
        used: float,
        needed: float | None = None,
        what: str = "this call",
    ) -> None:
        self.axis = axis
        self.limit = limit
        self.used = used
        self.needed = needed
        self.what = what
        msg = (
            f"{label(axis)} budget exhausted: {format_amount(axis, used)}/"
            f"{format_amount(axis, limit)} used"
        )
        if needed is not None:
            msg += f" ({what} needs {format_amount(axis, needed)} more)"
        super().__init__(msg + "; answer with what you have")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.axis, self.limit, self.used, self.needed, self.what))
