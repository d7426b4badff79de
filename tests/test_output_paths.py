"""Output checks when several processes check the same missing directory at once (two evals
on a fresh RLM_DOCS_HOME): each check passes and leaves nothing behind, while a file system
that refuses new entries, or a dangling symlink on the way, is still an error."""

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
    assert not (tmp_path / "home").exists()  # the checks proved the path and made nothing


def test_a_file_system_that_refuses_new_entries_is_still_an_error():
    if not Path("/proc").is_dir() or os.access("/proc", os.W_OK) and os.getuid() != 0:
        pytest.skip("needs /proc")
    with pytest.raises(ConfigError, match=r"--out /proc/nope: cannot write in /proc/nope"):
        check_output_dir("/proc/nope", "--out")


def test_a_dangling_symlink_on_the_way_is_an_error_not_a_loop(tmp_path):
    (tmp_path / "link").symlink_to(tmp_path / "gone")
    with pytest.raises(ConfigError, match=r"--out .*link/run: cannot write in .*link/run"):
        check_output_dir(tmp_path / "link" / "run", "--out")


def test_a_check_of_a_missing_directory_creates_nothing(tmp_path):
    check_output_dir(tmp_path / "home" / "a" / "b", "--out")
    assert list(tmp_path.iterdir()) == []
