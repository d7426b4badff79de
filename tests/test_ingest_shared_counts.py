"""Token counts shared by ingest's two processes: the same counts as counting in one process,
whichever process counts a chunk, and no hang when the other process dies holding the lock."""

import multiprocessing as mp
import os
import signal
from pathlib import Path

import pytest

import rlm_docs.corpus.store as store
from rlm_docs.corpus import Corpus
from rlm_docs.ingest import ingest
from rlm_docs.tokens import count_tokens

pytestmark = pytest.mark.skipif(
    "fork" not in mp.get_all_start_methods(), reason="needs the fork start method"
)

TEXTS = [
    f"Page {i}: revenue grew {i * 7}% to ${i * 1.5:.1f} million. " * (1 + i % 5) for i in range(40)
]


def test_two_processes_count_what_one_counts(monkeypatch) -> None:
    monkeypatch.setattr(store, "SHARED_CHUNK", 3)
    shared = store._SharedCounts(TEXTS)
    child = mp.get_context("fork").Process(
        target=shared.count, kwargs={"front": False, "peer_alive": lambda: True}
    )
    child.start()
    shared.count(front=True, peer_alive=child.is_alive)
    child.join()
    assert child.exitcode == 0
    assert list(shared.counts) == [count_tokens(t) for t in TEXTS]


def test_a_peer_killed_holding_the_lock_does_not_hang_the_count(monkeypatch) -> None:
    monkeypatch.setattr(store, "SHARED_CHUNK", 7)
    shared = store._SharedCounts(TEXTS)
    held = mp.get_context("fork").Event()

    def hold() -> None:
        shared.lock.acquire()
        held.set()
        signal.pause()

    child = mp.get_context("fork").Process(target=hold, daemon=True)
    child.start()
    assert held.wait(30)
    assert child.pid is not None
    os.kill(child.pid, signal.SIGKILL)
    shared.count(front=True, peer_alive=child.is_alive)
    assert list(shared.counts) == [count_tokens(t) for t in TEXTS]


def test_forked_ingest_stores_the_same_token_counts(tmp_path: Path, monkeypatch) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for n in range(3):
        (src / f"doc{n}.txt").write_text("\f".join(TEXTS[n::3]) + "\f")
    ingest([src], tmp_path / "inline")
    monkeypatch.setattr(store, "PARALLEL_MIN_CHARS", 0)
    monkeypatch.setattr(store, "SHARED_CHUNK", 2)
    ingest([src], tmp_path / "forked")
    a, b = Corpus.load(tmp_path / "inline"), Corpus.load(tmp_path / "forked")
    assert a.total_tokens == b.total_tokens > 0
    for name in a.names:
        assert a.document(name).tokens == b.document(name).tokens
    assert (tmp_path / "forked" / "bm25" / "kinds.npy").is_file()
