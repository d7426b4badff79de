"""The bundled demo corpus: built once under RLM_DOCS_HOME, safe when processes race, and its
demo questions cite pages that really hold the answers."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rlm_docs.corpus import Corpus
from rlm_docs.ingest.demo import demo_corpus_path, demo_questions_path


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("home")


@pytest.fixture(scope="module")
def demo(home: Path) -> Corpus:
    old = os.environ.get("RLM_DOCS_HOME")
    os.environ["RLM_DOCS_HOME"] = str(home)
    try:
        path = demo_corpus_path()
        stamp = (path / "pages.parquet").stat().st_mtime_ns
        assert demo_corpus_path() == path  # reused, not rebuilt
        assert (path / "pages.parquet").stat().st_mtime_ns == stamp
    finally:
        if old is None:
            del os.environ["RLM_DOCS_HOME"]
        else:
            os.environ["RLM_DOCS_HOME"] = old
    assert path.parent == home and path.name.startswith("demo-")
    return Corpus.load(path)


def test_demo_corpus_contents(demo: Corpus) -> None:
    assert demo.names == ["3M_2018_10K", "AMAZON_2019_10K", "JOHNSON_JOHNSON_2022Q4_EARNINGS"]
    assert [d.num_pages for d in demo.documents] == [160, 83, 24]
    size = sum(f.stat().st_size for f in (demo_questions_path().parent).rglob("*") if f.is_file())
    assert size < 4_000_000


def _questions() -> list[dict]:
    return [json.loads(line) for line in demo_questions_path().read_text().splitlines() if line]


def test_demo_questions_schema_and_evidence(demo: Corpus) -> None:
    questions = _questions()
    assert 6 <= len(questions) <= 8
    assert len({q["id"] for q in questions}) == len(questions)
    for q in questions:
        assert q["question"].strip() and q["question_type"] in {"extractive", "computed"}
        assert all(
            isinstance(v, list) and all(isinstance(s, str) for s in v) for v in q["answer_variants"]
        )
        pages = [demo.page(e["document"], e["page"]) for e in q["evidence"]]  # raises if invalid
        if q["question_type"] == "extractive":
            # The quoted figure (e.g. "32,765" of "$32,765 million") is on an evidence page.
            figures = [re.search(r"\d[\d,.]*\d|\d", v[0]).group() for v in q["answer_variants"]]
            assert any(f in p for f in figures for p in pages), q["id"]
        else:
            # Every input figure named in the reasoning is on an evidence page.
            for figure in re.findall(r"\$([\d,]+) million", q["reasoning"]):
                assert any(figure in p for p in pages), (q["id"], figure)


def test_demo_search_finds_evidence_for_most_questions(demo: Corpus) -> None:
    found = 0
    for q in _questions():
        gold = {(e["document"], e["page"]) for e in q["evidence"]}
        found += any((h.document, h.page) in gold for h in demo.search(q["question"], k=5))
    assert found >= 6


def test_concurrent_first_use_builds_one_store(tmp_path: Path) -> None:
    code = "from rlm_docs.ingest.demo import demo_corpus_path; print(demo_corpus_path())"
    env = {**os.environ, "RLM_DOCS_HOME": str(tmp_path)}
    procs = [
        subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    assert outs[0] == outs[1]
    assert [p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")] == [
        Path(outs[0]).name
    ]
    assert Corpus.load(outs[0]).total_pages == 267
