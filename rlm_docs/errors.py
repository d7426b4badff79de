"""User-facing errors.

Every mistake a user can make (bad file, bad page, bad flag, missing key) raises a subclass of
`RlmDocsError` whose message names the file, page or field. The CLI prints the message and exits
non-zero instead of showing a traceback; library users can catch one base class.
"""

import sys


class RlmDocsError(Exception):
    """Base class for errors caused by user input or configuration."""

    exit_code = 2


class CorpusError(RlmDocsError):
    """A corpus store or a document/page reference is invalid."""


class IngestError(RlmDocsError):
    """A source file cannot be turned into documents."""


class ConfigError(RlmDocsError):
    """A flag, environment variable, model spec or budget is invalid."""


class ModelError(RlmDocsError):
    """A model backend refused the request (auth, bad request, context length)."""


class DatasetError(RlmDocsError):
    """A question set or prediction file is malformed."""


def user_errors() -> tuple[type[Exception], ...]:
    """What a command reports in one line (exit code `exit_code`) rather than a traceback:
    `RlmDocsError`, and the `sandbox` package's own `SandboxError` once the sandbox has been
    imported (nothing can raise it before; importing it here would slow every command's start)."""
    errors = sys.modules.get("sandbox.errors")
    return (RlmDocsError,) if errors is None else (RlmDocsError, errors.SandboxError)
