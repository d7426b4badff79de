"""Output checks when several processes check the same missing directory at once (two evals
on a fresh RLM_DOCS_HOME): each check passes and leaves nothing behind, while a file system
that refuses new entries is still an error."""

import multiprocessing
import os
from pathlib import Path

import pytest

from rlm_docs.errors import ConfigError
from rlm_docs.output_paths import check_output_dir


def _check_many(target: str, rounds: int, start, errors) -> None:
    start.wait()
    try:
        for _ in range(rounds):
            check_output_dir(target, "--out")
    except ConfigError as exc:
        errors.put(str(exc))
    else:
        errors.put("")


def test_concurrent_checks_of_one_missing_directory_all_pass(tmp_path):
    target = tmp_path / "home" / "a" / "b"
    ctx = multiprocessing.get_context("fork")
    start, errors = ctx.Barrier(4), ctx.Queue()
    workers = [
        ctx.Process(target=_check_many, args=(str(target), 100, start, errors)) for _ in range(4)
    ]
    for w in workers:
        w.start()
    found = sorted(errors.get(timeout=120) for _ in workers)
    for w in workers:
        w.join(timeout=30)
    assert found == ["", "", "", ""]
    # no probe file is left; a directory another check made under this one may remain (empty)
    assert [p for p in (tmp_path / "home").rglob("*") if not p.is_dir()] == []


def test_a_file_system_that_refuses_new_entries_is_still_an_error():
    if not Path("/proc").is_dir() or os.access("/proc", os.W_OK) and os.getuid() != 0:
        pytest.skip("needs /proc")
    with pytest.raises(ConfigError, match=r"--out /proc/nope: cannot write in /proc/nope"):
        check_output_dir("/proc/nope", "--out")
