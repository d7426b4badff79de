"""rlm-docs for users of the reference RLM, the `rlms` package (import name `rlm`): the
rlm-docs sandbox as an rlms environment, and rlms logs read as rlm-docs trajectories.

rlms has no hook for outside environments: `RLM` builds its environment with
`rlm.core.rlm.get_environment(name, kwargs)`. `register()` wraps that one function so the name
`ENVIRONMENT` builds a `SandboxEnv` and every other name goes to rlms' own factory unchanged;
it is idempotent and refuses rlms versions it was not tested with (the wrapped function and
the environment protocol are private to rlms and may change). See docs/rlms.md.
"""

from importlib import import_module, metadata
from typing import Any

from rlm_docs.errors import ConfigError

ENVIRONMENT = "rlm-docs-sandbox"
DEFAULT_ITERATIONS = 30  # rlms' `RLM(max_iterations=...)` default
TESTED_VERSIONS = ("0.1.3",)
_MARK = "_rlm_docs_sandbox"


def rlms_version() -> str:
    """The installed rlms version; ConfigError naming the extra when it is missing."""
    try:
        return metadata.version("rlms")
    except metadata.PackageNotFoundError:
        raise ConfigError(
            "the rlms package is not installed: pip install 'rlm-docs[rlms]'"
        ) from None


def require_rlms() -> str:
    """The installed rlms version, checked against TESTED_VERSIONS (ConfigError otherwise)."""
    version = rlms_version()
    if version not in TESTED_VERSIONS:
        raise ConfigError(
            f"rlms {version} is installed; rlm-docs works with rlms "
            f"{', '.join(TESTED_VERSIONS)} only (pip install 'rlm-docs[rlms]')"
        )
    return version


def register() -> None:
    """Make `RLM(environment=ENVIRONMENT, ...)` run its code in the rlm-docs sandbox."""
    require_rlms()
    core = import_module("rlm.core.rlm")
    if getattr(core.get_environment, _MARK, False):
        return
    original = core.get_environment
    from rlm_docs.rlms.environment import SandboxEnv

    def get_environment(environment: str, environment_kwargs: dict[str, Any]) -> Any:
        if environment == ENVIRONMENT:
            return SandboxEnv(**environment_kwargs)
        return original(environment, environment_kwargs)

    setattr(get_environment, _MARK, True)
    setattr(core, "get_environment", get_environment)  # noqa: B010 - rlms' module, not ours


__all__ = [
    "DEFAULT_ITERATIONS",
    "ENVIRONMENT",
    "TESTED_VERSIONS",
    "register",
    "require_rlms",
    "rlms_version",
]
