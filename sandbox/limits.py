"""Per-sandbox resource limits and the result of one cell."""

from dataclasses import dataclass, fields

from sandbox.errors import ConfigError


@dataclass(frozen=True)
class Limits:
    """Bounds on one sandbox worker.

    `wall_s` is enforced by the host per cell and excludes time spent waiting on host functions
    (an `llm_query` taking seconds does not count), so a cell making many sub-calls is not killed.
    `cpu_s` is the worker's CPU time per cell (RLIMIT_CPU, reset before each cell, and checked by
    the host too; CPU used between cells restarts the worker). `memory_mb` is
    the worker's address space (RLIMIT_AS); the default fits a 50k-page corpus and its index.
    `max_file_mb` bounds each file the worker writes (RLIMIT_FSIZE) and `max_disk_mb` all of them
    together (a tmpfs of that size on the work directory when the host runs as root).
    `max_output_chars` bounds both a cell's printed output and its error text.
    """

    wall_s: float = 30.0
    cpu_s: int = 60
    memory_mb: int = 6144
    max_output_chars: int = 20_000
    max_open_files: int = 256
    max_file_mb: int = 16
    max_disk_mb: int = 64
    max_processes: int = 256
    start_timeout_s: float = 120.0

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise ConfigError(f"Limits.{f.name} must be a positive number, got {value!r}")


@dataclass(frozen=True)
class CellOutcome:
    """What a cell printed, its short error (None on success), whether the worker was
    restarted (all variables lost), and the host-side round-trip time."""

    stdout: str
    error: str | None
    restarted: bool
    duration_s: float
