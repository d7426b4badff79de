"""Integration on ../shared/datasets/mmlongbench-doc and kgrag-sec10q (skipped when absent):
their files ingest as they are (scanned documents of form feeds only, names with spaces, the
documents.jsonl metadata) and `--where` selects the subsets their READMEs count."""

import shutil
from pathlib import Path

import pytest

from rlm_docs.corpus import Corpus
from rlm_docs.eval.dataset import load_questions
from rlm_docs.eval.filters import filter_questions
from rlm_docs.ingest import ingest

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"
MMLB, KGRAG = SHARED / "mmlongbench-doc", SHARED / "kgrag-sec10q"
SCANNED = "reportq32015-151009093138-lva1-app6891_95"  # no text layer (README)
TEXT = "05-03-18-political-release"


@pytest.mark.skipif(not (MMLB / "text").is_dir(), reason="MMLongBench-Doc data not present")
def test_mmlongbench_scanned_document_ingests_with_empty_pages(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in (SCANNED, TEXT):
        shutil.copy(MMLB / "text" / f"{name}.txt", src)
    report = ingest([src], tmp_path / "s", metadata=MMLB / "documents.jsonl")
    assert any(f"{SCANNED}.txt: all" in w and "empty" in w for w in report.warnings)
    corpus = Corpus.load(tmp_path / "s")
    raw = (MMLB / "text" / f"{SCANNED}.txt").read_text()
    assert corpus.num_pages(SCANNED) == raw.count("\f") and corpus.page(SCANNED, 1) == ""
    info = {d.name: d for d in corpus.documents}
    assert info[TEXT].doc_type == "Research report / Introduction"


@pytest.mark.skipif(not (MMLB / "questions.dev.jsonl").is_file(), reason="no MMLongBench-Doc")
def test_mmlongbench_text_only_subset_has_the_readme_counts():
    questions = load_questions(MMLB / "questions.dev.jsonl")
    text = filter_questions(questions, ["text_answerable=true"])
    both = filter_questions(text, ["evidence_pages_have_text=true"])
    unanswerable = filter_questions(questions, ["question_type=unanswerable"])
    assert (len(questions), len(text), len(both), len(unanswerable)) == (354, 102, 90, 74)


@pytest.mark.skipif(not (KGRAG / "text").is_dir(), reason="KG-RAG sec-10-q data not present")
def test_kgrag_names_with_spaces_and_metadata(tmp_path):
    names = ["2023 Q3 AAPL", "2023 Q2 MSFT"]
    ingest(
        [KGRAG / "text" / f"{n}.txt" for n in names],
        tmp_path / "s",
        metadata=KGRAG / "documents.jsonl",
    )
    corpus = Corpus.load(tmp_path / "s")
    assert sorted(corpus.names) == sorted(names)
    assert corpus.resolve("2023 Q3 AAPL.pdf") == "2023 Q3 AAPL"
    info = {d.name: d for d in corpus.documents}
    assert info["2023 Q3 AAPL"].company == "Apple Inc." and info["2023 Q3 AAPL"].doc_type == "10-Q"
    assert "36,413" in corpus.page("2023 Q3 AAPL", 4)  # README: gross margin on PDF page 4
