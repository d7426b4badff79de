"""What a system declares about itself, once: its name, options, call bound, how its trajectory
is read, its offline policy and its prompt templates.

`eval`/`sweep` flags and their help, `sweep --dry-run`'s call bound, the decomposition record,
the offline model's dispatch and the systems table of the docs all read these declarations
(`rlm_docs.systems.registry`), so a new system is one module with one `Declaration`, and a
declaration that lacks a piece fails when it is registered (`check`), never later and silently
(a missing call bound that prints too low a figure, a missing offline policy that quietly
answers as another system).

Options are a frozen dataclass whose defaults are written once; a field becomes an `eval` flag
when its metadata (`option`) names one. A flag several systems declare must mean the same there.
What is recorded in a run directory (`EvalSettings.options`, compared on `--resume`) is each
flag's value when the field is `recorded="always"`, else only when it differs from the default.
"""

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rlm_docs.errors import ConfigError
from rlm_docs.governor import Budget
from rlm_docs.templates import load_template


def option(
    default: Any,
    flag: str | None = None,
    help: str = "",  # noqa: A002 - argparse's word
    minimum: int | None = None,
    choices: tuple[str, ...] | None = None,
    recorded: str = "changed",
    strict: bool = False,
    metavar: str | None = None,
) -> Any:
    """A dataclass field of a system's options. `flag`: its `eval` flag (None: settable only
    from Python); a bool field's flag is `--no-...` and turns it off. `minimum`: smaller values
    are refused. `recorded`: "always" or "changed" (see the module docstring). `strict`: the
    flag is refused with a system that does not declare it (else such a system ignores it, so
    one sweep grid can cross it with every system)."""
    meta = {
        "flag": flag,
        "help": help,
        "minimum": minimum,
        "choices": choices,
        "recorded": recorded,
        "strict": strict,
        "metavar": metavar,
    }
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class Bound:
    """At most `value` model calls or dollars (None: no finite bound, and `why` names the flag
    that would bound it)."""

    value: float | None
    why: str = ""

    def __add__(self, other: "Bound") -> "Bound":
        if self.value is None:
            return self
        if other.value is None:
            return other
        return Bound(self.value + other.value)

    def times(self, n: int) -> "Bound":
        """The bound of `n` questions."""
        return self if self.value is None else Bound(self.value * n)


def sub_call_bound(budget: Budget, on: bool = True) -> Bound:
    """The most sub-calls a question makes: `--max-sub-calls` (0 when sub-calls are off)."""
    if not on:
        return Bound(0)
    if budget.max_sub_calls is None:
        return Bound(None, "--max-sub-calls")
    return Bound(budget.max_sub_calls)


def turns_bound(budget: Budget, max_turns: int) -> int:
    """The most turns a tool-calling agent takes: its own turn cap, and `--max-steps`."""
    return max_turns if budget.max_steps is None else min(max_turns, budget.max_steps)


def root_bound(budget: Budget, extra: int) -> Bound:
    """`--max-steps` root turns plus `extra` calls (a forced answer, an extraction)."""
    if budget.max_steps is None:
        return Bound(None, "--max-steps")
    return Bound(budget.max_steps + extra)


@dataclass(frozen=True)
class Reading:
    """How the decomposition record reads the system's trajectory. `cells`: an engine-style
    run (code cells, sub-calls, child runs: the code is analysed). Otherwise turns of a fixed
    program: the pages each turn's search returned or a call's span covered are looked at, and
    the tags are these: `search_first` "first-turn" (a search in the first turn), "any-turn"
    or None (it never searches);
    `whole_context` (the turn put the corpus's first `pages_kept` pages in one prompt);
    `reduce_after_map` (an answering turn after a chunked map is a reduce); `tags`: the
    system's own strategy tags, recorded by a turn in its `extra["tags"]` (a tag not declared
    here is not reported). A turn's `extra["read"]` (`[[doc, page], ...]`) is looked at too."""

    cells: bool = False
    search_first: str | None = "first-turn"
    whole_context: bool = False
    reduce_after_map: bool = False
    tags: tuple[str, ...] = ()


CELLS = Reading(cells=True)


@dataclass(frozen=True)
class Declaration:
    """One system. `factory(config)` builds it (`config.options` is the recorded dict; read it
    with `typed`). `calls(budget, options)`: the most model calls one question makes, a judge's
    call aside. `offline`: the offline model's replies by the policy name its calls carry
    (`Purpose(prompt=NAME)`, `rlm_docs.call_purpose`), or one sentence naming the offline
    policy that answers it otherwise (the engine's root policy, rlms' policy). `prompts`: its
    template names."""

    name: str
    summary: str
    factory: Callable[[Any], Any]
    options: type
    calls: Callable[[Budget, Any], Bound]
    reading: Reading
    offline: Mapping[str, Callable[[list[dict]], str]] | str
    prompts: tuple[str, ...] = ()
    # the source's settings in words for the docs table; `{field}` is the option's default
    settings: str = ""

    def typed(self, recorded: Mapping[str, Any]) -> Any:
        """The options dataclass from a recorded dict (ConfigError naming an unknown key)."""
        names = {f.name for f in dataclasses.fields(self.options)}
        unknown = sorted(set(recorded) - names)
        if unknown:
            known = ", ".join(sorted(names)) or "none"
            raise ConfigError(
                f"system {self.name}: unknown option(s) {', '.join(unknown)} (known: {known})"
            )
        return self.options(**{k: v for k, v in recorded.items() if v is not None})

    def flags(self) -> list[dataclasses.Field]:
        """The option fields that are `eval` flags."""
        return [f for f in dataclasses.fields(self.options) if f.metadata.get("flag")]


def check(decl: Declaration) -> None:
    """ConfigError naming the system and the missing or malformed piece."""

    def fail(what: str) -> None:
        raise ConfigError(f"system {decl.name or '(unnamed)'}: {what}")

    if not decl.name or not isinstance(decl.name, str) or decl.name != decl.name.strip():
        fail("needs a name")
    if not decl.summary:
        fail("needs a summary (what it does, for the docs' table)")
    if not callable(decl.factory):
        fail("factory must be callable (SystemConfig -> System)")
    factory_name = getattr(decl.factory, "name", decl.name)
    if factory_name != decl.name:
        fail(f"factory's name {factory_name!r} differs (its trajectories would say so)")
    if not (isinstance(decl.options, type) and dataclasses.is_dataclass(decl.options)):
        fail("options must be a dataclass type")
    for f in dataclasses.fields(decl.options):
        if f.default is dataclasses.MISSING:
            fail(f"option {f.name} needs a default")
        flag = f.metadata.get("flag")
        if flag and isinstance(f.default, bool) and not (flag.startswith("--no-") and f.default):
            fail(f"option {f.name}: a bool flag is --no-... over a True default")
        if f.metadata.get("recorded", "changed") not in ("always", "changed"):
            fail(f"option {f.name}: recorded is 'always' or 'changed'")
    if not callable(decl.calls):
        fail("needs a call bound (calls(budget, options) -> Bound) for sweep --dry-run")
    if not isinstance(decl.calls(Budget(), decl.options()), Bound):
        fail("calls(budget, options) must return a Bound")
    if not isinstance(decl.reading, Reading):
        fail("needs a Reading (how the decomposition record reads its trajectory)")
    if decl.reading.search_first not in ("first-turn", "any-turn", None):
        fail("reading.search_first is 'first-turn', 'any-turn' or None")
    if not all(isinstance(t, str) and t for t in decl.reading.tags):
        fail("reading.tags are non-empty strings")
    if not decl.offline:
        fail("needs an offline policy (policy name -> reply, or the policy that answers it)")
    if not isinstance(decl.offline, str) and not all(callable(v) for v in decl.offline.values()):
        fail("offline policies must be callables (messages -> reply)")
    try:
        decl.settings.format(**dataclasses.asdict(decl.options()))
    except (KeyError, IndexError, ValueError) as exc:
        fail(f"settings names no option field: {exc}")
    for name in decl.prompts:
        load_template(name)  # ConfigError naming the missing file
