"""What `ask` leaves in RLM_DOCS_HOME: no start-up cache of a large store's context (hundreds of
megabytes that only a later process could use) unless RLM_DOCS_CONTEXT_CACHE=on, and at most
the newest 100 trajectories in its default log directory."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rlm_docs.cli import main
from rlm_docs.corpus import Corpus
from rlm_docs.engine.trajectory import KEEP_TRAJECTORIES
from rlm_docs.repl.context_cache import MIN_CHARS

WORDS = [
    "revenue",
    "capital",
    "spending",
    "segment",
    "margin",
    "cash",
    "flow",
    "operating",
    "income",
    "dividend",
]


@pytest.fixture(scope="module")
def big_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store whose rendered context is past the cache's threshold."""
    page = " ".join(WORDS[i % len(WORDS)] for i in range(1200))
    pages = [f"Page {i} {page}" for i in range(MIN_CHARS // len(page) + 20)]
    return Corpus.from_documents({"big_2020_10k": pages}).save(
        tmp_path_factory.mktemp("big") / "store"
    )


@pytest.mark.parametrize(("setting", "cached"), [(None, 0), ("on", 1)])
def test_ask_leaves_no_context_cache_unless_asked_to(big_store, tmp_path, setting, cached):
    env = {k: v for k, v in os.environ.items() if k != "RLM_DOCS_CONTEXT_CACHE"}
    env["RLM_DOCS_HOME"] = str(tmp_path / "home")
    if setting is not None:
        env["RLM_DOCS_CONTEXT_CACHE"] = setting
    done = subprocess.run(
        [sys.executable, "-m", "rlm_docs", "ask", "What was revenue?", "--corpus", str(big_store)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert len(list((tmp_path / "home").glob("sandbox/context-*.bin"))) == cached


def test_ask_keeps_the_newest_trajectories_of_its_default_log_dir(rlm_home, tmp_path):
    store = Corpus.from_documents({"acme_2020_10k": ["Revenue was $4 million."]}).save(
        tmp_path / "store"
    )
    runs = tmp_path / "home" / "runs"
    runs.mkdir(parents=True)
    for i in range(KEEP_TRAJECTORIES + 5):
        old = runs / f"rlm_20200101_{i}_0.jsonl"
        old.write_text("{}\n")
        os.utime(old, (1_600_000_000 + i, 1_600_000_000 + i))
    other = runs / "notes.txt"  # not a trajectory: never touched
    other.write_text("mine")
    assert main(["ask", "What was revenue?", "--corpus", str(store)]) == 0
    left = sorted(runs.glob("rlm_*.jsonl"))
    assert len(left) == KEEP_TRAJECTORIES and other.exists()
    assert not (runs / "rlm_20200101_5_0.jsonl").exists()  # the oldest six went
    assert (runs / "rlm_20200101_6_0.jsonl").exists()
    mine = tmp_path / "mine"
    for i in range(KEEP_TRAJECTORIES + 1):
        (mine / f"rlm_x_{i}_0.jsonl").parent.mkdir(exist_ok=True)
        (mine / f"rlm_x_{i}_0.jsonl").write_text("{}\n")
    assert main(["ask", "What was revenue?", "--corpus", str(store), "--log-dir", str(mine)]) == 0
    assert len(list(mine.glob("rlm_*.jsonl"))) == KEEP_TRAJECTORIES + 2  # a given dir is kept
