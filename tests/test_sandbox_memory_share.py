"""The sandbox workers of one host process share one memory cap, and the OOM killer picks a
worker before the host: the review's `serve` with four runs (a root and a child sandbox each)
could reserve 8 x 6 GB of address space on a 23 GB machine."""

import os
from pathlib import Path

import pytest

from rlm_docs.corpus import Corpus
from rlm_docs.repl import CorpusSandbox
from sandbox import ConfigError, memory_share


def address_space_mb(pid: int) -> int:
    """The soft RLIMIT_AS of process `pid`, in MB, as the kernel reports it."""
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max address space"):
            return int(line.split()[3]) // 2**20
    raise AssertionError("no address-space line")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    docs = {"memo": ["The budget was $12 million."]}
    return Corpus.from_documents(docs).save(tmp_path_factory.mktemp("c") / "store")


def test_workers_are_the_oom_killers_first_choice(store) -> None:
    with CorpusSandbox(corpus=store) as sb:
        assert Path(f"/proc/{sb.pid}/oom_score_adj").read_text().strip() == "1000"
        assert sb.security()["oom_score_adj"] == 1000
    assert Path("/proc/self/oom_score_adj").read_text().strip() != "1000"


def test_live_workers_share_the_cap_and_earlier_ones_are_lowered(store, monkeypatch) -> None:
    others = len(memory_share.live_mb())  # sandboxes other tests of this process keep open
    cap = 2400 * (others + 4)
    monkeypatch.setenv(memory_share.ENV, str(cap))
    boxes = [CorpusSandbox(corpus=store)]
    try:
        first = boxes[0]
        alone = min(6144, cap // (others + 1))
        assert first.memory_mb == alone and address_space_mb(first.pid) == alone
        boxes += [
            CorpusSandbox(corpus=store) for _ in range(3)
        ]  # a root and a child sandbox, twice
        for sb in boxes:  # a running worker applies a lowered share before its next request
            sb.run("x = 1")
        share = cap // (others + 4)
        assert first.security()["memory_needed_mb"] < share  # so no share is raised
        limits = [address_space_mb(sb.pid) for sb in boxes]
        assert limits == [share] * 4 and [sb.memory_mb for sb in boxes] == limits
        if not others:
            assert sum(memory_share.live_mb().values()) <= cap
        # the first worker, lowered while alive, can no longer allocate what it could
        code = (
            f"try:\n    b = bytearray({share + 500} * 2**20)\nexcept MemoryError:\n    print('no')"
        )
        assert first.run(code).stdout.strip() == "no"
    finally:
        for sb in boxes:
            sb.close()
    assert len(memory_share.live_mb()) == others
    with CorpusSandbox(corpus=store) as again:  # shares are freed with their workers
        assert again.memory_mb == alone


def test_the_default_cap_is_a_share_of_the_machine(monkeypatch) -> None:
    monkeypatch.delenv(memory_share.ENV, raising=False)
    total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2**20
    assert memory_share.cap_mb() == int(0.75 * memory_share.machine_mb())
    assert memory_share.machine_mb() <= total
    monkeypatch.setenv(memory_share.ENV, "lots")
    with pytest.raises(ConfigError, match="RLM_DOCS_SANDBOX_MEMORY_MB=lots: expected"):
        memory_share.cap_mb()
