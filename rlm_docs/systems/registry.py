"""The registry of systems: every declaration (`rlm_docs.systems.declaration`) by name.

The built-in systems' modules each register their one declaration when imported; they are
imported on the first look-up, so building the registry costs nothing until a system is asked
for. Any other module may `register` a system of its own (a study's variant, a test's toy): it
is then run, bounded, decomposed, answered offline and listed like the built-in ones.
"""

from importlib import import_module

from rlm_docs.errors import ConfigError
from rlm_docs.offline.baselines import add_policy, drop_policy
from rlm_docs.systems.declaration import Declaration, check

# The modules that declare the built-in systems, in the order they are listed.
BUILT_IN = (
    "rlm_docs.systems.rlm_system",
    "rlm_docs.systems.bm25_agent",
    "rlm_docs.systems.static_rag",
    "rlm_docs.systems.long_context",
    "rlm_docs.systems.map_reduce",
    "rlm_docs.systems.deepread",
    "rlm_docs.systems.docdancer",
    "rlm_docs.systems.sleuth",
    "rlm_docs.systems.rlms_system",
    "rlm_docs.systems.agent_system",
)
_DECLARED: dict[str, Declaration] = {}


def register(decl: Declaration) -> Declaration:
    """Add `decl` (ConfigError naming the missing piece, or a name already taken by another
    declaration); registering the same declaration again is a no-op."""
    check(decl)
    known = _DECLARED.get(decl.name)
    if known is not None and known is not decl:
        raise ConfigError(f"system {decl.name}: already registered")
    if not isinstance(decl.offline, str):
        added: list[str] = []
        try:
            for policy, reply in decl.offline.items():
                add_policy(policy, reply)
                added.append(policy)
        except ValueError as exc:
            for policy in added if known is None else []:  # nothing half-registered
                drop_policy(policy)
            raise ConfigError(f"system {decl.name}: {exc}") from None
    _DECLARED[decl.name] = decl
    return decl


def unregister(name: str) -> None:
    """Forget a system registered at run time (a test's toy) and its offline policies;
    built-in systems stay."""
    if any(import_module(m).DECLARATION.name == name for m in BUILT_IN):
        raise ConfigError(f"system {name}: built in, cannot be removed")
    decl = _DECLARED.pop(name, None)
    if decl is not None and not isinstance(decl.offline, str):
        for policy in decl.offline:
            drop_policy(policy)


def _load() -> None:
    for module in BUILT_IN:
        import_module(module)


def declarations() -> list[Declaration]:
    """Every registered system: the built-in ones in `BUILT_IN`'s order (whichever module was
    imported first), then the others in the order they were registered."""
    _load()
    built_in = [import_module(m).DECLARATION for m in BUILT_IN]
    return built_in + [d for d in _DECLARED.values() if d not in built_in]


def system_names() -> tuple[str, ...]:
    return tuple(d.name for d in declarations())


def declaration(name: str) -> Declaration:
    """The declaration of `name`; ConfigError listing the valid names."""
    _load()
    decl = _DECLARED.get(name)
    if decl is None:
        raise ConfigError(f"system {name!r}: expected one of {', '.join(system_names())}")
    return decl
