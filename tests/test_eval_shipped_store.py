"""A corpus store shipped as one archive and unpacked once per machine (`eval --executor ray
--ray-ship-corpus`), and the client settings that follow questions to other processes."""

import importlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rlm_docs.corpus import Corpus
from rlm_docs.errors import CorpusError
from rlm_docs.eval import shipped_store
from rlm_docs.eval.shipped_store import pack_store, unpack_store
from rlm_docs.models.factory import _HTTP_BACKENDS, secret_env
from tests.fixtures.eval.support import build_store

REPO = Path(__file__).resolve().parents[1]


def _files(root):
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_a_store_round_trips_and_unpacks_once_per_archive(tmp_path):
    store = build_store(tmp_path / "store")
    archive = pack_store(store)
    first = Path(unpack_store(archive, root=tmp_path / "node"))
    assert first != store and _files(first) == _files(store)
    assert len(Corpus.load(first).search("Globex headquarters", k=1)) == 1
    (first / "seen").write_text("unpacked before")  # a second call must reuse this directory
    assert Path(unpack_store(archive, root=tmp_path / "node")) == first
    assert (first / "seen").exists()
    # nothing half-unpacked is left beside it (only the lock files' directory)
    assert sorted(p.name for p in first.parent.iterdir()) == [".locks", first.name]


def _unpack_elsewhere(archive: Path, root: Path, stay: bool) -> subprocess.Popen:
    """Another process unpacks `archive` under `root`, prints its path, and exits at once
    (`stay=False`: releasing the store) or waits for its stdin to close."""
    code = (
        "import sys; from rlm_docs.eval.shipped_store import unpack_store; "
        f"print(unpack_store(open({str(archive)!r}, 'rb').read(), root={str(root)!r}), "
        "flush=True); " + ("sys.stdin.read()" if stay else "")
    )
    return subprocess.Popen(
        [sys.executable, "-c", code], cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip


def _age(path: Path, days: float) -> None:
    old = time.time() - days * 86400
    os.utime(path, (old, old))


def test_old_stores_no_process_holds_are_pruned_and_held_ones_kept(tmp_path):
    node = tmp_path / "node"
    archives = {}
    for name in ("gone", "held", "recent", "mine"):
        store = build_store(tmp_path / name)
        (store / "label").write_text(name)  # a different archive, so a different directory
        archives[name] = tmp_path / f"{name}.tar"
        archives[name].write_bytes(pack_store(store))
    finished = _unpack_elsewhere(archives["gone"], node, stay=False)
    gone = Path(finished.communicate(timeout=60)[0].strip())
    holder = _unpack_elsewhere(archives["held"], node, stay=True)
    try:
        held = Path(holder.stdout.readline().strip())
        recent = Path(_unpack_elsewhere(archives["recent"], node, False).communicate()[0].strip())
        scratch = node / shipped_store._ROOT / ".unpacking-crashed"
        scratch.mkdir()
        for path in (gone, held, scratch):
            _age(path, 2)
        mine = Path(unpack_store(archives["mine"].read_bytes(), root=node))  # prunes
        assert not gone.exists() and not scratch.exists()
        assert held.is_dir() and recent.is_dir() and mine.is_dir()
    finally:
        holder.communicate(timeout=60)
    # once its holder has exited, an old store goes at the next unpack
    assert Path(unpack_store(archives["mine"].read_bytes(), root=node)) == mine
    assert not held.exists()
    # a store this process holds stays however old it is
    _age(mine, 2)
    assert shipped_store.prune_stores(node / shipped_store._ROOT) == []
    assert mine.is_dir() and recent.is_dir()


def test_a_missing_store_is_named(tmp_path):
    with pytest.raises(CorpusError, match="nowhere: corpus store not found"):
        pack_store(tmp_path / "nowhere")


def test_every_http_backend_key_is_treated_as_a_secret():
    keys = {importlib.import_module(m).ENV_KEY for m, _ in _HTTP_BACKENDS.values()}
    assert keys == set(secret_env())


def _base(node: Path) -> Path:
    return node / shipped_store._ROOT


def test_a_store_directory_others_can_enter_is_refused(tmp_path):
    archive = pack_store(build_store(tmp_path / "store"))
    base = _base(tmp_path / "node")
    base.mkdir(parents=True, mode=0o777)
    base.chmod(0o777)
    with pytest.raises(CorpusError, match=r"not a directory private to this user .*mode 777"):
        unpack_store(archive, root=tmp_path / "node")
    base.chmod(0o700)
    os.chown(base, 65534, -1)  # another user's (the tests may run as root)
    if os.stat(base).st_uid == 65534:
        with pytest.raises(CorpusError, match="owner uid 65534"):
            unpack_store(archive, root=tmp_path / "node")


def test_planted_lock_links_are_never_followed(tmp_path):
    archive = pack_store(build_store(tmp_path / "store"))
    node = tmp_path / "node"
    mine = Path(unpack_store(archive, root=node))
    locks = _base(node) / ".locks"
    # an old store whose lock file is a link to a path the planter wants created
    old = _base(node) / ("0" * 32)
    old.mkdir()
    _age(old, 2)
    (locks / old.name).symlink_to(tmp_path / "victim")
    assert shipped_store.prune_stores(_base(node)) == []
    assert not (tmp_path / "victim").exists() and old.is_dir()
    # a fresh archive whose lock file is planted as a link is refused, creating nothing
    other = build_store(tmp_path / "other")
    (other / "label").write_text("other")
    archive = pack_store(other)
    name = shipped_store.hashlib.sha256(archive).hexdigest()[:32]
    (locks / name).symlink_to(tmp_path / "victim2")
    with pytest.raises(CorpusError, match="cannot open the store's lock file"):
        unpack_store(archive, root=node)
    assert not (tmp_path / "victim2").exists() and mine.is_dir()


def test_a_directory_planted_at_the_hash_name_is_not_loaded(tmp_path):
    store = build_store(tmp_path / "store")
    archive = pack_store(store)
    node = tmp_path / "node"
    name = shipped_store.hashlib.sha256(archive).hexdigest()[:32]
    planted = _base(node) / name
    planted.parent.mkdir(parents=True, mode=0o700)
    planted.parent.chmod(0o700)
    fake = Corpus.from_documents({"planted": ["Text the planter wants read."]}).save(planted)
    with pytest.raises(CorpusError, match=f"{name}: .* differs from the shipped store's"):
        unpack_store(archive, root=node)
    # the genuine store, once unpacked, is verified and reused
    fake_files = sorted(p.name for p in fake.iterdir())
    shipped_store.shutil.rmtree(planted)
    assert Path(unpack_store(archive, root=node)) == planted and fake_files
    assert Path(unpack_store(archive, root=node)) == planted
    assert Corpus.load(planted).names == Corpus.load(store).names
