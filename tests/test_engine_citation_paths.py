"""How a run's final answer and citations are chosen (see `rlm_docs.engine.rlm`): explicit
citations, then cite() calls, then pages read; the docs prompt's `["..."] -- DOC page N` form
parsed without an extraction call; refusals kept; the extraction request's wording per prompt
and the cited pages it is given."""

import json
from pathlib import Path

import pytest

from rlm_docs.engine import RLM
from rlm_docs.models import ScriptedClient
from tests.fixtures.engine import repl, saved_store

DOCS = {
    "acme_2020_10k": ["Cover.", "Total revenue was $412 million in 2020.", "Assets: $1,020m."],
    "globex_2021_10k": ["Globex.", "Net income was $55 million."],
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return saved_store(tmp_path_factory, DOCS)


def ask(store: Path, replies: list[str], **kwargs):
    root = ScriptedClient(replies)
    rlm = RLM(store, model=root, sub_model=ScriptedClient([]), **kwargs)
    pred = rlm.ask("What was Acme's revenue in 2020?")
    result = rlm.last_trajectory.result.to_dict()
    return pred, result, root


READ_AND_CITE = repl(
    "t = page('acme_2020_10k', 2)\nu = page('acme_2020_10k', 3)\ncite('acme_2020_10k', 3)"
)


def test_explicit_citations_win_over_cite_and_reads(store):
    final = 'FINAL({"answer": ["$412 million"], "citations": [{"file": "acme_2020_10k.pdf", "page": 2}]})'
    pred, result, _ = ask(store, [READ_AND_CITE, final])
    assert pred.citations == [{"file": "acme_2020_10k", "page": 2}]
    assert result["citation_source"] == "model"


def test_cite_calls_are_used_when_the_answer_names_no_valid_page(store):
    final = (
        'FINAL({"answer": ["$412 million"], "citations": [{"file": "acme_2020_10k", "page": 99}]})'
    )
    pred, result, _ = ask(store, [READ_AND_CITE, final])
    assert pred.citations == [{"file": "acme_2020_10k", "page": 3}]
    assert result["citation_source"] == "cite" and result["rejected_citations"] == [
        {"file": "acme_2020_10k", "page": 99}
    ]


def test_pages_read_are_used_when_nothing_is_cited(store):
    read = repl("t = page('acme_2020_10k', 2)\nu = pages('globex_2021_10k', 1, 2)")
    pred, result, _ = ask(store, [read, 'FINAL(["$412 million"])'])
    assert pred.citations == [
        {"file": "acme_2020_10k", "page": 2},
        {"file": "globex_2021_10k", "page": 1},
        {"file": "globex_2021_10k", "page": 2},
    ]
    assert result["citation_source"] == "read"


def test_nothing_read_nothing_cited_gives_no_citation(store):
    pred, result, _ = ask(store, ['FINAL(["$412 million"])'])
    assert pred.citations == [] and result["citation_source"] == "none"


def test_the_docs_final_form_is_parsed_without_an_extraction_call(store):
    final = 'FINAL(["$412 million"] -- acme_2020_10k page 2, globex_2021_10k pages 1 and 2)'
    pred, result, root = ask(store, [final])
    assert pred.answer == ["$412 million"]
    assert pred.citations == [
        {"file": "acme_2020_10k", "page": 2},
        {"file": "globex_2021_10k", "page": 1},
        {"file": "globex_2021_10k", "page": 2},
    ]
    assert result["extraction"] == "structured" and len(root.calls) == 1


def test_a_refusal_stays_the_answer_and_borrows_no_evidence(store):
    pred, result, root = ask(store, [READ_AND_CITE, "FINAL(Not answerable)"])
    assert pred.answer == ["Not answerable"] and pred.citations == []
    assert len(root.calls) == 2  # no extraction call


def test_free_text_goes_to_the_docs_extraction_with_the_cited_pages(store):
    extraction = json.dumps(
        {"answer": ["$412 million"], "citations": [{"file": "acme_2020_10k", "page": 3}]}
    )
    pred, result, root = ask(store, [READ_AND_CITE, "FINAL(Revenue was $412 million.)", extraction])
    request = root.calls[2][0]["content"]
    assert root.purposes[2] is not None and root.purposes[2].role == "extract"
    assert request.startswith("You format the final answer of a run")
    assert "Pages the run recorded with cite(): acme_2020_10k page 3" in request
    assert "1-based page index" in request and "PDF filename" not in request
    assert '"Not answerable"' in request
    assert pred.answer == ["$412 million"] and result["extraction"] == "extract"


def test_madqa_extraction_keeps_madqas_wording_but_not_its_empty_refusal(store):
    extraction = json.dumps({"answer": ["$412 million"], "citations": []})
    _, _, root = ask(store, ["FINAL(Revenue was $412 million.)", extraction], prompt="madqa")
    request = root.calls[1][0]["content"]
    assert "exact PDF filename" in request and "[PAGE N] markers" in request
    assert '["Not answerable"]' in request and "Pages recorded with cite(): (none)" in request
