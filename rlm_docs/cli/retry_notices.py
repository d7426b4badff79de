"""Model-call retries shown on stderr as they happen, so a slow or failing provider is never
silent: every attempt with `-v`, otherwise one line when a call first needs a retry.

The retry loop (`rlm_docs.models.retry`) logs each failed attempt; this installs the handler that
prints them (sanitized: the reason quotes the server's reply).
"""

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from rlm_docs.terminal_text import sanitize

_LOGGER = "rlm_docs.models.retry"


class _Notice(logging.Handler):
    def __init__(self, command: str, verbose: bool) -> None:
        super().__init__(logging.WARNING)
        self.command = command
        self.verbose = verbose

    def emit(self, record: logging.LogRecord) -> None:
        if not self.verbose and getattr(record, "attempt", 1) != 1:
            return
        hint = "" if self.verbose else " (-v shows every attempt)"
        line = f"rlm-docs {self.command}: retrying: {record.getMessage()}{hint}"
        sys.stderr.write(sanitize(line) + "\n")
        sys.stderr.flush()


@contextmanager
def retry_notices(command: str, verbose: bool) -> Iterator[None]:
    """Print retries of model calls made inside the block on stderr."""
    logger = logging.getLogger(_LOGGER)
    handler = _Notice(command, verbose)
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)
