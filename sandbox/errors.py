"""The sandbox's own errors, so that it can be used without the library that hosts it.

Both carry `exit_code = 2`: a command line built on the sandbox reports them as a user's or
configuration's fault in one line, like its own errors.
"""


class SandboxError(Exception):
    """The sandbox worker could not start (its preload failed) or stopped answering."""

    exit_code = 2


class ConfigError(SandboxError):
    """A limit or a sandbox environment variable is invalid."""


class PreloadError(SandboxError):
    """The preload factory raised: `kind` is its exception's class name and `detail` its
    message, so the host can map a failure it knows (a missing corpus) back to its own
    exception class."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"sandbox failed to start: {kind}: {detail}")
        self.kind = kind
        self.detail = detail
