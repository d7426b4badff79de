"""A corpus store shipped as one archive and unpacked once per machine (`eval --executor ray
--ray-ship-corpus`), and the client settings that follow questions to other processes."""

import importlib
from pathlib import Path

import pytest

from rlm_docs.corpus import Corpus
from rlm_docs.errors import CorpusError
from rlm_docs.eval.shipped_store import pack_store, unpack_store
from rlm_docs.models.factory import _HTTP_BACKENDS, SECRET_ENV
from tests.fixtures.eval.support import build_store


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
    # nothing half-unpacked is left beside it
    assert [p.name for p in first.parent.iterdir()] == [first.name]


def test_a_missing_store_is_named(tmp_path):
    with pytest.raises(CorpusError, match="nowhere: corpus store not found"):
        pack_store(tmp_path / "nowhere")


def test_every_http_backend_key_is_treated_as_a_secret():
    keys = {importlib.import_module(m).ENV_KEY for m, _ in _HTTP_BACKENDS.values()}
    assert keys == set(SECRET_ENV)
