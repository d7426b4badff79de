"""The `rlm-docs` command line.

Each subcommand lives in its own module exposing `register(subparsers)`, which adds a parser
whose `func` default takes the parsed namespace and returns an exit code. User mistakes raise
`RlmDocsError`; they are printed as one clear line and exit non-zero, never as a traceback.
"""

import argparse
import importlib
import os
import sys

from rlm_docs.cli.interrupt import leave, sigterm_as_interrupt
from rlm_docs.errors import user_errors
from rlm_docs.output_paths import check_home
from rlm_docs.terminal_text import sanitize
from rlm_docs.version import __version__


class _Parser(argparse.ArgumentParser):
    """argparse with the CLI's error convention: a usage mistake is one line
    `rlm-docs <subcommand path>: error: <message>` and exit 2 (no usage block; `--help` is
    unchanged). Subparsers inherit the class through `add_subparsers`.
    """

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        ns, extras = super().parse_known_args(args, namespace)
        if not getattr(ns, "cli_prog", None):  # the innermost subparser sets it first
            ns.cli_prog = self.prog
        return ns, extras

    def parse_args(self, args=None, namespace=None):  # type: ignore[override]
        ns, extras = self.parse_known_args(args, namespace)
        if extras:  # name the subcommand the stray arguments were given to
            self._fail(ns.cli_prog, f"unrecognized arguments: {' '.join(extras)}")
        return ns

    def error(self, message: str):  # type: ignore[override]
        self._fail(self.prog, message)

    def _fail(self, prog: str, message: str):
        self.exit(2, f"{prog}: error: {sanitize(message)}\n")


def command_path(args: argparse.Namespace) -> str:
    """`corpus search` for `rlm-docs corpus search ...`: the full subcommand path."""
    prog = getattr(args, "cli_prog", None) or f"rlm-docs {args.command}"
    return prog.removeprefix("rlm-docs").strip() or args.command


def _message(args: argparse.Namespace, text: str) -> str:
    """The error text without a leading `report: ` that repeats the command name (unless the
    user also typed that word as an argument, where it would be a path)."""
    word = args.command
    raw = getattr(args, "argv", [])
    if text.startswith(f"{word}: ") and raw.count(word) <= 1:
        return text[len(word) + 2 :]
    return text


_COMMANDS = (
    "ingest",
    "corpus",
    "ask",
    "eval",
    "rescore",
    "attribute",
    "sweep",
    "report",
    "view",
    "bench",
    "serve",
    "mcp",
    "data",
    "export",
    "proxy",
)


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser (exposed for tests and docs)."""
    parser = _Parser(
        prog="rlm-docs",
        description="Recursive language models over document collections.",
    )
    parser.add_argument("--version", action="version", version=f"rlm-docs {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in _COMMANDS:
        importlib.import_module(f"rlm_docs.cli.{name}_cmd").register(sub)
    return parser


# Options whose value may itself start with a dash (MADQA's page separator is `---`).
_DASH_VALUE_OPTIONS = ("--separator",)


def _join_dash_values(argv: list[str]) -> list[str]:
    """`--separator ---` -> `--separator=---`: argparse would read `---` as an option."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        if argv[i] in _DASH_VALUE_OPTIONS and i + 1 < len(argv):
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
        else:
            out.append(argv[i])
            i += 1
    return out


def _os_error(exc: OSError) -> str:
    """An OS error on a user's path as one line: `PATH: reason` (no errno, no traceback)."""
    names = [str(n) for n in (exc.filename, exc.filename2) if n is not None]
    reason = exc.strerror or str(exc) or type(exc).__name__
    return f"{' -> '.join(names)}: {reason}" if names else reason


# Flags whose values name a model (and so maybe an endpoint) or a Ray cluster.
_MODEL_FLAGS = ("model", "sub_model", "judge", "allow_model")


def named_endpoints(args: argparse.Namespace) -> list[str]:
    """The endpoints this command line names: the `@URL` of its model flags, its
    `--ray-address` and its `--allow-endpoint`s (where API keys may go, see
    `rlm_docs.models.endpoints`)."""
    from rlm_docs.models.endpoints import spec_url

    found: list[str] = []
    for dest in _MODEL_FLAGS:
        value = getattr(args, dest, None)
        for item in value if isinstance(value, list) else [value]:
            url = spec_url(item) if isinstance(item, str) else None
            if url:
                found.append(url)
    ray = getattr(args, "ray_address", None)
    if ray and ray != "auto":
        found.append(ray)
    return found + list(getattr(args, "allow_endpoint", None) or [])


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the process exit code.

    User mistakes come back as one line `rlm-docs CMD: error: ...` and exit code 2: an
    `RlmDocsError` from the command, or an OS error on a path the user gave (a file where a
    directory belongs, a read-only or full disk) that no earlier check caught. API keys go
    only to endpoints this command line or the environment names (`named_endpoints`).
    """
    from rlm_docs.models.endpoints import named_by_user

    raw = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(_join_dash_values(raw))
    args.argv = raw
    with named_by_user(named_endpoints(args)):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    path = command_path(args)
    try:
        if getattr(args, "needs_home", False):
            check_home()
        with sigterm_as_interrupt(args.command):
            return int(args.func(args) or 0)
    except user_errors() as exc:
        # sanitized: messages quote file names, model replies and document text
        print(f"rlm-docs {path}: error: {sanitize(_message(args, str(exc)))}", file=sys.stderr)
        return int(getattr(exc, "exit_code", 2))
    except BrokenPipeError:
        # The reader went away (`... | head`): not the user's mistake and nothing to report.
        # Point stdout at /dev/null so the interpreter's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a writer whose reader left
    except OSError as exc:
        print(f"rlm-docs {path}: error: {sanitize(_os_error(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        return leave(path, exc)
