"""One split of a Hugging Face dataset, with the hub's failures as one-line user errors.

`datasets.load_dataset` already caches every file under `HF_HOME`, resumes a broken download
and shows progress bars; this module only decides where the repository comes from (the hub,
or a local copy of it under `mirror` (`--mirror`, or RLM_DOCS_HUB_MIRROR), as
`hf download --repo-type dataset --local-dir` writes it, for machines without a network) and turns its exceptions into `HubError`s that name the
repository and what to do.
"""

import gc
from pathlib import Path
from typing import Any

from rlm_docs.env import env_value
from rlm_docs.errors import ConfigError, RlmDocsError

MIRROR_VAR = "RLM_DOCS_HUB_MIRROR"
"""A directory of local copies of hub repositories, used as `--mirror` is when it is unset."""


class HubError(RlmDocsError):
    """A data set could not be fetched or read (network, unknown split, missing extra)."""


EXTRA_HINT = "pip install 'rlm-docs[hub]'"


def mirror_setting(flag: str | Path | None) -> tuple[Path | None, str]:
    """The mirror directory (`--mirror`, else RLM_DOCS_HUB_MIRROR) and how to name it in an
    error; (None, "") to use the hub."""
    if flag is not None:
        return Path(flag), f"--mirror {flag}"
    value = env_value(MIRROR_VAR)
    return (Path(value), f"{MIRROR_VAR}={value}") if value else (None, "")


def source_of(repo: str, mirror: Path | None, label: str = "--mirror") -> str:
    """What `load_dataset` is given: the hub name, or the mirror's copy of that repository."""
    if mirror is None:
        return repo
    local = Path(mirror) / repo
    if not local.is_dir():
        raise HubError(f"{label}: no copy of {repo} (expected the directory {local})")
    return str(local)


def load_split(
    repo: str,
    split: str,
    config: str | None,
    mirror: Path | None,
    label: str = "--mirror",
    files: str = "",
) -> Any:
    """The rows of `repo`'s `split` (a `datasets.Dataset`).

    `load_dataset` downloads and prepares every split of a repository, whichever is asked
    for; `files` (a pattern with `{split}`, e.g. `data/{split}-*`) limits it to the split's
    own files, which matters when the splits are gigabytes each.
    """
    try:
        import datasets
    except ImportError:
        raise ConfigError(f"data get needs the `hub` extra: {EXTRA_HINT}") from None
    source = source_of(repo, mirror, label)
    try:
        if files:
            pattern = files.format(split=split)
            return datasets.load_dataset(source, config, data_files={split: pattern}, split=split)
        return datasets.load_dataset(source, config, split=split)
    except ConnectionError as exc:
        error = (
            f"cannot reach the Hugging Face Hub for {repo} ({_first_line(exc)}); check the "
            "network, or copy the repository to DIR/" + repo + " elsewhere and pass --mirror DIR"
        )
    except ValueError as exc:  # an unknown split or config names the ones that exist
        error = f"{repo}: {_first_line(exc)}"
    except FileNotFoundError as exc:
        error = f"{repo}: not found ({_first_line(exc)})"
    except datasets.exceptions.DatasetGenerationError as exc:  # a file that is not what it says
        error = f"{repo}: cannot read its files ({_first_line(exc.__cause__ or exc)})"
    # Raised outside the handler, with no chained exception: the failed load's frames (and the
    # Arrow readers they hold, whose C++ threads abort the process if they are still alive at
    # interpreter exit) are collected now, while Arrow is still loaded.
    gc.collect()
    raise HubError(error)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__
