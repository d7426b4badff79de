"""argparse `type=` helpers for numeric flags, so `--max-steps 0` or `-k -3` is refused by the
parser itself (one line naming the flag, exit 2) instead of being accepted and misbehaving.

Below both front ends that parse flags, the CLI and the notebook magics (`%rlm_ask --max-steps`),
so neither imports the other."""

import argparse
import math
from collections.abc import Callable


def _number(kind: type, low: float, low_open: bool, high: float | None = None):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            noun = "an integer" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"expected {noun}, got {text!r}") from None
        if not math.isfinite(value):  # nan, inf: no limit at all, or one every check passes
            raise argparse.ArgumentTypeError(f"expected a finite number, got {text}")
        if value < low or (low_open and value == low):
            bound = f"> {low:g}" if low_open else f">= {low:g}"
            raise argparse.ArgumentTypeError(f"must be {bound}, got {text}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"must be <= {high:g}, got {text}")
        return value

    return parse


positive_int: Callable[[str], int] = _number(int, 1, False)
"""An integer >= 1 (steps, workers, hits, pages)."""

count: Callable[[str], int] = _number(int, 0, False)
"""An integer >= 0 (limits where 0 means "none allowed", e.g. sub-calls, recursion depth)."""

positive_float: Callable[[str], float] = _number(float, 0.0, True)
"""A number > 0 (dollars, seconds)."""

fraction: Callable[[str], float] = _number(float, 0.0, True, 1.0)
"""A number in (0, 1] (judge sensitivity and specificity)."""

non_negative_float: Callable[[str], float] = _number(float, 0.0, False)
"""A number >= 0 (grace periods, where 0 means "none")."""

tcp_port: Callable[[str], int] = _number(int, 0, False, 65535)
"""A TCP port, 0..65535 (0: any free port)."""


def step_limits(text: str) -> list[int]:
    """`--max-steps` of `eval`: one limit (`8`) or a comma list (`1,2,4,8,16`) of integers >= 1,
    sorted; a list runs the exact accuracy-vs-step-limit curve, so a limit given twice is refused
    (`2,2` would otherwise quietly become one ordinary run)."""
    parts = [p.strip() for p in text.split(",")]
    if not all(p.isdigit() and int(p) >= 1 for p in parts):
        raise argparse.ArgumentTypeError(
            f"expected an integer >= 1 or a comma list of them (e.g. 1,2,4,8,16), got {text!r}"
        )
    limits = [int(p) for p in parts]
    if len(set(limits)) < len(limits):
        raise argparse.ArgumentTypeError(f"a step limit appears twice in {text!r}")
    return sorted(limits)


def plural(n: int, noun: str) -> str:
    """`1 step`, `2 steps`, `1,234 pages`: a count with its noun, singular for exactly 1."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"
