"""The one error a budget refusal raises, worded for the model that has to react to it."""

from rlm_docs.errors import RlmDocsError

LABELS = {
    "steps": "root-step",
    "sub_calls": "sub-call",
    "input_tokens": "input-token",
    "output_tokens": "output-token",
    "cost_usd": "dollar",
    "wall_s": "wall-time",
    "depth": "recursion-depth",
}


def format_amount(axis: str, value: float) -> str:
    """Human form of an amount on `axis` ($0.1234, 12.3s, 41,000)."""
    if axis == "cost_usd":
        return f"${value:,.4f}"
    if axis == "wall_s":
        return f"{value:,.1f}s"
    return f"{int(value):,}"


class BudgetExceeded(RlmDocsError):
    """A hard limit refused a call; `axis` is one of LABELS' keys.

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
            f"{LABELS.get(axis, axis)} budget exhausted: {format_amount(axis, used)}/"
            f"{format_amount(axis, limit)} used"
        )
        if needed is not None:
            msg += f" ({what} needs {format_amount(axis, needed)} more)"
        super().__init__(msg + "; answer with what you have")

    def __reduce__(self) -> tuple:
        return (type(self), (self.axis, self.limit, self.used, self.needed, self.what))
