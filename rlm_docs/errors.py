"""User-facing errors.

Every mistake a user can make (bad file, bad page, bad flag, missing key) raises a subclass of
`RlmDocsError` whose message names the file, page or field. The CLI prints the message and exits
non-zero instead of showing a traceback; library users can catch one base class.
"""


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


class SandboxError(RlmDocsError):
    """The sandbox worker could not start or stopped answering."""
