"""Per-question limits on every axis of effort; None means unlimited."""

import math
from dataclasses import dataclass, fields

from rlm_docs.errors import ConfigError

_INT_FIELDS = (
    "max_steps",
    "max_sub_calls",
    "max_input_tokens",
    "max_output_tokens",
    "max_depth",
    "stop_at_step",
)


@dataclass(frozen=True)
class Budget:
    """Hard limits for one question (including every child RLM it spawns)."""

    max_steps: int | None = 20
    max_sub_calls: int | None = 100
    max_input_tokens: int | None = None
    max_output_tokens: int | None = None
    max_cost_usd: float | None = None
    max_wall_s: float | None = None
    max_depth: int = 1
    max_concurrency: int = 8
    soft_fraction: float = 0.8
    # Cut the run after this many root steps (then the forced answer) while prompts, notices
    # and child shares still show `max_steps`: one limit of the exact step-limit curve
    # (`eval --max-steps 1,2,4`), whose trajectory is then the `max_steps` run's trajectory up
    # to the cut, so the response cache replays that prefix.
    stop_at_step: int | None = None

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None and f.name not in ("max_depth", "max_concurrency", "soft_fraction"):
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ConfigError(f"budget {f.name}: expected a number, got {value!r}")
            if not _finite(value):  # NaN passes every `<` check; inf means "no limit" (None)
                raise ConfigError(f"budget {f.name}: expected a finite number, got {_shown(value)}")
            if f.name in (*_INT_FIELDS, "max_concurrency") and not isinstance(value, int):
                raise ConfigError(f"budget {f.name}: expected a whole number, got {value!r}")
            if value < 0:
                raise ConfigError(f"budget {f.name}: must not be negative, got {value!r}")
        if self.max_concurrency < 1:
            raise ConfigError(f"budget max_concurrency: must be >= 1, got {self.max_concurrency}")
        if self.stop_at_step is not None and self.stop_at_step < 1:
            raise ConfigError(f"budget stop_at_step: must be >= 1, got {self.stop_at_step}")
        if not 0 < self.soft_fraction <= 1:
            raise ConfigError(f"budget soft_fraction: must be in (0, 1], got {self.soft_fraction}")


def _finite(value: int | float) -> bool:
    """Whether `value` is a finite float (a huge int is not: time and dollars overflow)."""
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def _shown(value: int | float) -> str:
    try:
        text = repr(value)
    except ValueError:  # an int past Python's digit limit for str()
        return "an integer of over 4,300 digits"
    return text if len(text) <= 40 else f"{text[:20]}... ({len(text):,} digits)"
