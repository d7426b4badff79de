"""Flags several commands share, declared once: the per-question budget (`ask`, `eval`, `serve`,
`mcp`, `proxy`, sweep specs), the model request timeout, the confirmation turn, and the RLM's
`--anytime` / `--memory` (declared as options of the `rlm` system; `ask` adds the same flags).

A command adds them with `add_*` and reads them back with the matching `*_from_args`, so a flag's
type, help and meaning are the same wherever it appears.
"""

import argparse
from typing import Any

from rlm_docs.number_flags import count, positive_float, positive_int

# (flag, Budget field, argparse type, help): 0 is refused where it would make the run pointless
# and kept where it means "none of this" (no sub-calls, no recursion).
# Budget fields that are settings, not effort axes (the axes' flags are declared with them).
_SETTING_FLAGS = (("--concurrency", "max_concurrency", positive_int, "parallel sub-calls"),)


def _budget_flags() -> list[tuple[str, str, Any, str]]:
    """(flag, Budget field, argparse type, help) of every budget flag: one per limitable axis
    (`governor.axes`, with its `Budget` default), then the settings."""
    from dataclasses import fields

    from rlm_docs.governor import Budget
    from rlm_docs.governor.axes import limits

    defaults = {f.name: f.default for f in fields(Budget)}
    flags = []
    for axis in limits():
        if axis.flag is None or axis.limit is None:
            continue
        default = defaults[axis.limit]
        if default is None:
            said = "default: no limit"
        else:
            said = f"default {default}" + ("; 0: none" if axis.zero_allowed else "")
        if axis.unit in ("usd", "seconds"):
            kind: Any = positive_float
        else:
            kind = count if axis.zero_allowed else positive_int
        flags.append((axis.flag, axis.limit, kind, f"{axis.flag_help} ({said})"))
    for flag, dest, kind, text in _SETTING_FLAGS:
        flags.append((flag, dest, kind, f"{text} (default {defaults[dest]})"))
    return flags


def add_budget_args(parser: argparse.ArgumentParser, steps: tuple[Any, str] | None = None) -> None:
    """The per-question budget flags (unset flags keep `Budget`'s defaults); `steps` replaces
    the type and help of `--max-steps` (eval's step-limit lists)."""
    group = parser.add_argument_group("budget (per question, including child RLMs)")
    for flag, dest, kind, text in _budget_flags():
        if steps is not None and dest == "max_steps":
            kind, text = steps
        group.add_argument(flag, dest=dest, type=kind, default=None, metavar="N", help=text)


def budget_from_args(args: argparse.Namespace) -> Any:
    """A `Budget` from the flags given (ConfigError naming the bad field)."""
    from rlm_docs.errors import ConfigError
    from rlm_docs.governor import Budget

    given = {dest: getattr(args, dest) for _, dest, _, _ in _budget_flags()}
    steps = given["max_steps"]
    if isinstance(steps, list):  # eval's `step_limits` type: one limit is a plain budget
        if len(steps) > 1:
            raise ConfigError(
                f"--max-steps {','.join(map(str, steps))}: a list of step limits runs only as "
                "`rlm-docs eval ... --max-steps LIST` (the exact step-limit curve)"
            )
        given["max_steps"] = steps[0]
    return Budget(**{k: v for k, v in given.items() if v is not None})


def add_confirm_arg(parser: argparse.ArgumentParser) -> None:
    """`--no-confirm-final`: end a run as soon as code sets `answer["ready"]` (MADQA's protocol),
    without the confirmation turn that shows the model what its finishing code printed."""
    parser.add_argument(
        "--no-confirm-final",
        action="store_true",
        help='end the run as soon as code sets answer["ready"] = True, without first showing the '
        "model what that code printed (default: one confirmation turn when it printed output)",
    )


def add_timeout_arg(parser: argparse.ArgumentParser) -> None:
    """`--timeout SECONDS` for every HTTP model request (root, sub-model, judge)."""
    parser.add_argument(
        "--timeout",
        type=positive_float,
        metavar="SECONDS",
        help="per HTTP request to a model before it is retried "
        "(default: RLM_DOCS_TIMEOUT or 120; raise it for slow local servers and reasoning models)",
    )


def apply_timeout(args: argparse.Namespace) -> None:
    """Make `--timeout` the default of every client this command builds (and of Ray workers,
    which are sent `factory.client_settings()`); without the flag, RLM_DOCS_TIMEOUT or 120."""
    from rlm_docs.models.factory import set_default_timeout

    set_default_timeout(args.timeout)


# The rlm system's options that `ask` also takes (declared in `systems.rlm_system.RlmOptions`).
RLM_RUN_FLAGS = ("--anytime", "--memory")


def add_rlm_run_args(parser: argparse.ArgumentParser) -> None:
    """`--anytime SHARES` and `--memory DIR`, with the help and types `eval` gives them."""
    from rlm_docs.cli.system_options import add_option_flags

    add_option_flags(parser, only=RLM_RUN_FLAGS)


def rlm_run_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """The `RLM(...)` arguments those flags set (ConfigError naming a bad `--anytime`)."""
    from rlm_docs.systems.rlm_system import DECLARATION, run_kwargs

    given = {
        f.name: getattr(args, f.name, None)
        for f in DECLARATION.flags()
        if f.metadata["flag"] in RLM_RUN_FLAGS
    }
    return run_kwargs(DECLARATION.typed(given))
