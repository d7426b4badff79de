"""Systems' options as `eval`/`sweep` flags, derived from their declarations.

Each option field that names a flag (`rlm_docs.systems.declaration.option`) becomes one flag;
a flag several systems declare (`--top-k`) is added once, its help naming them and their
defaults. The parsed flags become the options dict recorded in a run directory
(`options_from_args`), so flags, help, defaults and what a run records cannot drift apart.
"""

import argparse
import dataclasses
from typing import Any

from rlm_docs.errors import ConfigError
from rlm_docs.number_flags import positive_int
from rlm_docs.systems.registry import declaration, declarations


def _declared_flags() -> dict[str, list[tuple[str, dataclasses.Field]]]:
    """flag -> [(system, field)] over every registered system, in declaration order."""
    flags: dict[str, list[tuple[str, dataclasses.Field]]] = {}
    for decl in declarations():
        for f in decl.flags():
            flags.setdefault(f.metadata["flag"], []).append((decl.name, f))
    return flags


def _dest(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def _help(uses: list[tuple[str, dataclasses.Field]]) -> str:
    """The field's help, then the systems that have it and their default(s)."""
    first = uses[0][1]
    systems = ", ".join(name for name, _ in uses)
    defaults = {f.default for _, f in uses}
    if isinstance(first.default, bool) or defaults <= {None, ""}:
        return f"{first.metadata['help']} [{systems}]"
    if len(defaults) == 1:
        return f"{first.metadata['help']} [{systems}; default {first.default}]"
    each = ", ".join(f"{f.default} for {name}" for name, f in uses)
    return f"{first.metadata['help']} [{systems}; default {each}]"


def add_option_flags(parser: argparse.ArgumentParser, only: tuple[str, ...] = ()) -> None:
    """Add every registered system's option flags not already on `parser` (`only`: just
    these)."""
    for flag, uses in _declared_flags().items():
        if only and flag not in only:
            continue
        if flag in parser._option_string_actions:  # e.g. --no-confirm-final, shared with ask
            continue
        first = uses[0][1]
        meta = first.metadata
        if isinstance(first.default, bool):
            parser.add_argument(flag, action="store_true", default=None, help=_help(uses))
            continue
        kind = next((f.type for _, f in uses if f.type), str)
        convert = positive_int if "int" in str(kind) else str
        parser.add_argument(
            flag,
            type=convert,
            choices=meta["choices"],
            metavar=meta["metavar"],
            default=None,
            help=_help(uses),
        )


def _given(args: argparse.Namespace, flag: str, f: dataclasses.Field) -> Any:
    """The value the flag sets for field `f`, None when it was not given."""
    value = getattr(args, _dest(flag), None)
    if isinstance(f.default, bool):
        return False if value else None
    return value


def options_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The options dict of `args.system` from the parsed flags (ConfigError for a value below
    its minimum, or a strict flag given to a system that does not have it)."""
    decl = declaration(args.system)
    mine = {f.metadata["flag"]: f for f in decl.flags()}
    for flag, uses in _declared_flags().items():
        value = _given(args, flag, uses[0][1])
        if value is None:
            continue
        if flag not in mine and any(f.metadata["strict"] for _, f in uses):
            names = ", ".join(name for name, _ in uses)
            raise ConfigError(f"{flag} applies to --system {names} only")
        minimum = uses[0][1].metadata["minimum"]
        if minimum is not None and value < minimum:
            unit = " tokens" if uses[0][1].metadata["metavar"] == "TOKENS" else ""
            raise ConfigError(f"{flag} must be >= {minimum}{unit}, got {value}")
    options: dict[str, Any] = {}
    for flag, f in mine.items():
        given = _given(args, flag, f)
        value = f.default if given is None else given
        if f.metadata["recorded"] == "always" or value != f.default:
            options[f.name] = value
    return options
