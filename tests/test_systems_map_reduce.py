import json
import re
import threading
import time

import pytest

from rlm_docs.corpus import Corpus
from rlm_docs.engine.trajectory import load_trajectory
from rlm_docs.eval.dataset import load_questions
from rlm_docs.governor import Budget, Governor, Ledger
from rlm_docs.systems import SystemConfig, make_system
from rlm_docs.systems.map_reduce import default_chunk_tokens
from rlm_docs.systems.windows import chunk_pages
from rlm_docs.tokens import count_tokens
from tests.fixtures.eval.support import DOCS, QUESTIONS, run_system, server_env
from tests.servers.chat import ChatServer

pytestmark = pytest.mark.usefixtures(server_env.__name__)
CORPUS = Corpus.from_documents(DOCS)
Q1 = load_questions(QUESTIONS)[0]  # Acme revenue, on acme_2022_10k page 2
_LABEL = re.compile(r"^\[FILE: (.+?) \| PAGE: (\d+)\]", re.M)


class Reader:
    """A model that answers a map prompt when it shows acme page 2, and reduces by taking the
    first note with an answer; it records the largest number of map calls in flight."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.active = self.peak = 0
        self.lock = threading.Lock()
        self.reduce_prompts: list[str] = []

    def __call__(self, messages: list[dict]) -> str:
        prompt = messages[0]["content"]
        if prompt.startswith("You combine notes"):  # the reduce prompt
            self.reduce_prompts.append(prompt)
            notes = re.findall(r"^\[NOTE \d+ \| [^\n]*\]\n(.*?)\n\[END NOTE\]", prompt, re.M | re.S)
            return notes[0] if notes else json.dumps({"answer": [], "citations": []})
        with self.lock:
            self.active += 1
            self.peak = max(self.peak, self.active)
        time.sleep(self.delay)
        with self.lock:
            self.active -= 1
        if ("acme_2022_10k", "2") in _LABEL.findall(prompt):
            cite = [{"file": "acme_2022_10k", "page": 2}]
            return json.dumps({"answer": ["$4.2 billion"], "citations": cite, "quote": "Revenue"})
        return "NO RELEVANT TEXT"


def _run(tmp_path, srv, budget=None, **options):
    model = f"openai:gpt-4o-mini@{srv.base_url}"
    return run_system(tmp_path, "map-reduce", model, budget, **options)


def test_chunks_cover_every_page_once_in_order_within_the_size():
    order = [(d.name, n) for d in CORPUS.documents for n in range(1, d.num_pages + 1)]
    for size in (64, 120, 400, 100_000):
        chunks = chunk_pages(CORPUS, size)
        assert [(p["file"], p["page"]) for c in chunks for p in c.pages] == order
        for c in chunks:
            assert len(c.pages) == 1 or count_tokens(c.text) <= size
            assert [tuple(x) for x in _LABEL.findall(c.text)] == [
                (p["file"], str(p["page"])) for p in c.pages
            ]
    assert len(chunk_pages(CORPUS, 100_000)) == 1
    assert len(chunk_pages(CORPUS, 64)) == CORPUS.total_pages  # no two pages fit in 64 tokens


def test_one_sub_call_per_chunk_concurrently_then_one_reduce_call(tmp_path):
    reader = Reader(delay=0.2)
    with ChatServer(reply=reader) as srv:
        system, p, ledger = _run(tmp_path, srv, budget=Budget(max_concurrency=4), chunk_tokens=64)
    chunks = len(system.chunks())
    assert chunks == CORPUS.total_pages == 8
    roles = [e.role for e in ledger.entries]
    assert roles.count("sub") == chunks and roles.count("root") == 1 and roles[-1] == "root"
    assert (p.sub_calls, p.steps, p.stop_reason) == (chunks, 1, "final")
    assert 2 <= reader.peak <= 4  # concurrent, within max_concurrency
    assert p.answer == ["$4.2 billion"]
    assert p.citations == [{"file": "acme_2022_10k", "page": 2}]
    assert p.info["map"] == {
        "chunk_tokens": 64,
        "chunks": 8,
        "read": 8,
        "relevant": 1,
        "not_read": 0,
        "notes_sent": 1,
    }
    (reduce,) = reader.reduce_prompts
    assert "NO RELEVANT TEXT" not in reduce and "excerpt: acme_2022_10k p.2-2" in reduce
    calls = load_trajectory(p.trajectory).iterations[0].sub_calls
    assert len(calls) == 8 and all(c.prompt.startswith("[map prompt:") for c in calls)
    assert None not in {c.batch for c in calls} and {c.depth for c in calls} == {0}


def test_a_sub_call_budget_below_the_chunk_count_reads_a_prefix_then_reduces(tmp_path):
    reader = Reader()
    with ChatServer(reply=reader) as srv:
        _, p, ledger = _run(
            tmp_path, srv, budget=Budget(max_sub_calls=3, max_concurrency=2), chunk_tokens=64
        )
    roles = [e.role for e in ledger.entries]
    assert roles.count("sub") == 3 and roles[-1] == "root"  # the governor refused the rest
    info = p.info["map"]
    assert (info["read"], info["not_read"], info["chunks"]) == (3, 5, 8)
    assert (p.stop_reason, p.stop_axis) == ("forced", "sub_calls")  # not `final`
    assert "the budget stopped the reading after 3 of 8" in reader.reduce_prompts[0]


def test_a_refused_reduce_call_is_a_budget_stop(tmp_path):
    reader = Reader()
    with ChatServer(reply=reader) as srv:
        _, p, ledger = _run(tmp_path, srv, budget=Budget(max_steps=0), chunk_tokens=64)
    assert p.stop_reason == "budget" and p.answer == []
    assert [e.role for e in ledger.entries].count("root") == 0 and reader.reduce_prompts == []


def test_chunk_size_defaults_to_a_quarter_of_the_sub_model_window(tmp_path):
    with ChatServer(reply=Reader()) as srv:
        config = SystemConfig(corpus=CORPUS, model=f"openai:gpt-4o-mini@{srv.base_url}")
        assert make_system("map-reduce", config).chunk_tokens == default_chunk_tokens(128000)
    assert default_chunk_tokens(128000) == 32000


def test_offline_map_reduce_reads_every_chunk_and_cites_the_answer_page(tmp_path):
    config = SystemConfig(corpus=CORPUS, model="offline", options={"chunk_tokens": 120})
    system = make_system("map-reduce", config)
    ledger = Ledger()
    p = system.answer(Q1, Governor(ledger=ledger, question_id=Q1.id))
    assert p.sub_calls == len(system.chunks()) > 1
    assert p.answer == ["$4.2 billion"]
    assert p.citations == [{"file": "acme_2022_10k", "page": 2}]
