"""Pluggable page-search rankers: which one a corpus gets (its metadata, its names, the store's
manifest, the `ranker=` argument and the CLI flags), and the generic default applying no SEC
knowledge on a collection that is not SEC filings."""

import json
from pathlib import Path

import pytest

from rlm_docs.cli import main
from rlm_docs.corpus import Corpus, Document
from rlm_docs.corpus.rankers import RANKER_NAMES, Ranking
from rlm_docs.corpus.search import RANKERS
from rlm_docs.corpus.sec_ranker import sec_collection
from rlm_docs.errors import CorpusError, IngestError
from rlm_docs.ingest import ingest

PROSE = "The team reviewed the plan, the schedule and the budget with care. " * 4
SIGNATURES = "SIGNATURES\nHow signatures are collected: each volunteer collects signatures. " * 3
EPS_MANUAL = "The EPS unit assists steering. EPS faults light the EPS lamp. EPS EPS. " + PROSE
# The best page of the best-matching document, with no document named: text 1 + document share
TOP = 1.0 + Ranking().doc
EARNINGS = "Earnings per share rose; earnings per share and share earnings grew. " + PROSE


def _docs(meta: list[dict[str, object]], names: list[str]) -> list[Document]:
    return [Document(n, [f"{n} text. " + PROSE], meta=m) for n, m in zip(names, meta, strict=True)]


@pytest.mark.parametrize(
    ("names", "meta", "sec"),
    [
        # FinanceBench rows: doc_type "10k", "10q", "8k", "Earnings" (three in four are forms)
        (
            ["A_2019_10K", "B_2020_10Q", "C_2021_8K", "D_2022_EARNINGS"],
            ["10k", "10q", "8k", "Earnings"],
            True,
        ),
        # KG-RAG rows: doc_type "10-Q", names "2022 Q3 AAPL"
        (["2022 Q3 AAPL", "2022 Q3 AMZN"], ["10-Q", "10-Q"], True),
        # no metadata: the names say 10-K / 8-K (the demo corpus's kind of names)
        (["3M_2018_10K", "AMAZON_2019_10K", "JOHNSON_JOHNSON_2022Q4_EARNINGS"], [None] * 3, True),
        # MMLongBench rows: reports, papers, guides
        (["paper", "guide", "report"], ["Academic paper", "Guidebook", "Financial report"], False),
        # metadata wins over a name that looks like a form
        (["X_2020_10K", "Y_2020_10K"], ["Brochure", "Brochure"], False),
        # fewer than half are forms
        (["A_2019_10K", "notes", "slides"], [None] * 3, False),
        (["notes", "slides"], [None, None], False),
    ],
)
def test_sec_ranker_chosen_for_sec_filings(names, meta, sec) -> None:
    rows = [{"doc_type": t} if t else {} for t in meta]
    assert sec_collection(names, rows) is sec
    corpus = Corpus.from_documents(_docs(rows, names))
    assert corpus.ranker == ("sec" if sec else "generic")


def test_every_ranker_name_has_a_ranker() -> None:
    assert tuple(RANKERS) == RANKER_NAMES
    assert all(RANKERS[name].name == name for name in RANKER_NAMES)


@pytest.fixture(scope="module")
def papers() -> Corpus:
    return Corpus.from_documents(
        {
            "petition_guide": [SIGNATURES, PROSE],
            "car_manual": [EPS_MANUAL],
            "finance_notes": [EARNINGS],
            "other": [PROSE, PROSE],
        }
    )


def test_generic_default_applies_no_sec_knowledge(papers: Corpus) -> None:
    assert papers.ranker == "generic"
    # A page starting "SIGNATURES" is an SEC form's signature page to the SEC ranker (-0.3);
    # here it is the answer, at the full score.
    q = "How are signatures collected by volunteers?"
    top = papers.search(q, k=1)[0]
    assert (top.document, top.page, top.score) == ("petition_guide", 1, pytest.approx(TOP))
    sec = {(h.document, h.page): h.score for h in papers.search(q, k=3, ranker="sec")}
    assert sec[("petition_guide", 1)] == pytest.approx(TOP - Ranking().form)
    # "EPS" is the steering unit here, not "earnings per share" as the SEC ranker spells it out.
    q = "What does the EPS lamp mean?"
    assert papers.search(q, k=1)[0].document == "car_manual"
    assert papers.search(q, k=1, ranker="sec")[0].document == "finance_notes"


def test_generic_ranker_on_filings_keeps_bm25_and_document_evidence() -> None:
    corpus = Corpus.from_documents(
        [
            Document(f"ACME_{y}_10K", [f"Acme annual report {y}. " + PROSE, EARNINGS])
            for y in (2019, 2020)
        ]
    )
    assert corpus.ranker == "sec"
    q = "Acme's FY2020 earnings per share"
    assert corpus.search(q, k=1)[0].document == "ACME_2020_10K"  # the filing fit
    generic = corpus.search(q, k=4, ranker="generic")
    # no filing fit: both years' statement pages tie and the earlier row comes first
    assert [(h.document, h.page) for h in generic[:2]] == [
        ("ACME_2019_10K", 2),
        ("ACME_2020_10K", 2),
    ]
    assert generic[0].score == generic[1].score


def test_unknown_ranker_is_one_clear_error(papers: Corpus) -> None:
    with pytest.raises(CorpusError, match=r"unknown ranker 'bogus' \(choose from generic, sec\)"):
        papers.search("signatures", ranker="bogus")


def _sources(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    (src / "ACME_2019_10K.txt").write_text(f"{SIGNATURES}\fAcme annual report. {PROSE}\f")
    (src / "ACME_2020_10K.txt").write_text(f"Acme annual report 2020. {PROSE}\f")
    return src


def test_ingest_records_the_ranker_and_search_uses_it(tmp_path: Path) -> None:
    src, out = _sources(tmp_path), tmp_path / "store"
    ingest([src], out)
    assert Corpus.load(out).ranker == "sec" and "ranker" not in Corpus.load(out).manifest
    report = ingest([src], out, ranker="generic")
    assert report.written and json.loads((out / "manifest.json").read_text())["ranker"] == "generic"
    corpus = Corpus.load(out)
    assert corpus.ranker == "generic"
    q = "How are signatures collected?"
    assert corpus.search(q, k=1)[0].score == pytest.approx(TOP)  # no form penalty
    assert corpus.search(q, k=1, ranker="sec")[0].score == pytest.approx(TOP - Ranking().form)
    assert not ingest([src], out).written  # the recorded choice is kept, nothing to rewrite
    assert Corpus.load(out).ranker == "generic"
    with pytest.raises(IngestError, match=r"unknown --ranker 'x' \(choose from generic, sec\)"):
        ingest([src], out, ranker="x")


def test_cli_ranker_flags(tmp_path: Path, capsys) -> None:
    src, out = _sources(tmp_path), tmp_path / "store"
    assert main(["ingest", str(src), "--out", str(out), "--ranker", "sec"]) == 0
    capsys.readouterr()
    query = "How are signatures collected?"
    assert main(["corpus", "search", str(out), query, "-k", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["score"] == pytest.approx(TOP - Ranking().form)
    args = ["corpus", "search", str(out), query, "-k", "1", "--json", "--ranker", "generic"]
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["score"] == pytest.approx(TOP)
    assert main(["corpus", "search", str(out), query, "--ranker", "nope"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "unknown ranker 'nope'" in err
    assert main(["ingest", str(src), "--out", str(tmp_path / "o2"), "--ranker", "nope"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "unknown --ranker 'nope'" in err
    assert not (tmp_path / "o2").exists()
