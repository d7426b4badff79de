"""The command-line reference of docs/cli.md, written from the argument parsers themselves, so
the documentation cannot name a flag, default or command that the CLI does not have.

`python -m rlm_docs.cli.reference` prints it; `--write` puts it between the markers of
docs/cli.md (a test checks the page against it).
"""

import argparse
import functools
import sys
from collections.abc import Iterator
from pathlib import Path

from rlm_docs.cli import build_parser

BEGIN = "<!-- cli reference: begin -->\n"
END = "<!-- cli reference: end -->\n"
WIDTH = 96  # help text wrapped as on a 96-column terminal, whatever terminal writes the page


def _subcommands(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """Every parser below `parser`, depth first, in the order `--help` lists them."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):  # aliases share a parser
                yield child
                yield from _subcommands(child)


def _help(parser: argparse.ArgumentParser) -> str:
    parser.formatter_class = functools.partial(parser.formatter_class, width=WIDTH)  # type: ignore[call-arg]
    return parser.format_help()


def cli_reference() -> str:
    """One section per command: its name as a heading, its `--help` as a text block."""
    root = build_parser()
    parts = [f"## `rlm-docs`\n\n```text\n{_help(root)}```\n"]
    for parser in _subcommands(root):
        parts.append(f"## `{parser.prog}`\n\n```text\n{_help(parser)}```\n")
    return "\n".join(parts)


def write(page: Path) -> None:
    """Replace the text between the markers of `page` with the reference."""
    text = page.read_text(encoding="utf-8")
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    page.write_text(head + BEGIN + cli_reference() + END + tail, encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        write(Path(__file__).resolve().parents[2] / "docs" / "cli.md")
    else:
        print(cli_reference(), end="")
