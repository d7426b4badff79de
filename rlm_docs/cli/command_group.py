"""`rlm-docs GROUP ACTION`: a command that is a group of actions (`bench make`, `data get`),
built in one call so each group states only its words, not argparse's plumbing."""

import argparse


def group_action(
    subparsers: argparse._SubParsersAction,
    group: str,
    action: str,
    *,
    group_help: tuple[str, str],
    action_help: tuple[str, str],
) -> argparse.ArgumentParser:
    """The parser of `rlm-docs GROUP ACTION` (the group requires an action); each `*_help` is
    (one-line help, description)."""
    parent = subparsers.add_parser(group, help=group_help[0], description=group_help[1])
    actions = parent.add_subparsers(dest=f"{group}_command", metavar="ACTION")
    actions.required = True
    parser: argparse.ArgumentParser = actions.add_parser(
        action, help=action_help[0], description=action_help[1]
    )
    return parser
