"""Atomic writes: all-or-nothing replacement, with ordinary file permissions."""

import os
import stat
from pathlib import Path

import pytest

from rlm_docs.atomic import atomic_directory, atomic_write_text


def test_write_replaces_whole_file_with_umask_permissions(tmp_path: Path) -> None:
    target = tmp_path / "out" / "report.md"
    atomic_write_text(target, "old")
    atomic_write_text(target, "new")
    assert target.read_text() == "new"
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~mask
    assert [p.name for p in target.parent.iterdir()] == ["report.md"]


def test_failed_directory_write_keeps_the_old_directory(tmp_path: Path) -> None:
    store = tmp_path / "store"
    with atomic_directory(store) as tmp:
        (tmp / "a.txt").write_text("v1")
    with pytest.raises(RuntimeError), atomic_directory(store) as tmp:
        (tmp / "a.txt").write_text("half")
        raise RuntimeError("boom")
    assert (store / "a.txt").read_text() == "v1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["store"]


def test_directory_write_swaps_in_the_new_contents(tmp_path: Path) -> None:
    store = tmp_path / "store"
    with atomic_directory(store) as tmp:
        (tmp / "a.txt").write_text("v1")
    with atomic_directory(store) as tmp:
        (tmp / "b.txt").write_text("v2")
    assert sorted(p.name for p in store.iterdir()) == ["b.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["store"]
