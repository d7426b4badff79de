import json

import pytest

from rlm_docs.corpus import Corpus
from rlm_docs.engine.trajectory import load_trajectory
from rlm_docs.errors import ConfigError
from rlm_docs.eval.dataset import load_questions
from rlm_docs.governor import Budget, Governor, Ledger
from rlm_docs.systems import SystemConfig, make_system
from rlm_docs.systems.bm25_agent import LAST_TURN
from tests.fixtures.eval.support import DOCS, QUESTIONS

CORPUS = Corpus.from_documents(DOCS)
Q1 = load_questions(QUESTIONS)[0]


def _system(tmp_path, name, replies, budget=None, **options):
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(replies))
    config = SystemConfig(
        corpus=CORPUS,
        model=f"scripted:{script}",
        budget=budget or Budget(),
        log_dir=str(tmp_path / "logs"),
        options=options,
    )
    (tmp_path / "logs").mkdir(exist_ok=True)
    system = make_system(name, config)
    ledger = Ledger()
    gov = Governor(config.budget, ledger=ledger, question_id=Q1.id)
    return system, gov, ledger


def test_bm25_agent_searches_then_answers_with_normalised_citations(tmp_path):
    answer = {"answer": ["$4.2 billion"], "citations": [{"file": "ACME_2022_10K.pdf", "page": 2}]}
    system, gov, ledger = _system(
        tmp_path, "bm25-agent", ["SEARCH: acme revenue", "SEARCH: fiscal 2022", json.dumps(answer)]
    )
    p = system.answer(Q1, gov)
    assert p.answer == ["$4.2 billion"]
    assert p.citations == [{"file": "acme_2022_10k", "page": 2}]
    assert (p.steps, p.stop_reason, p.question_id) == (3, "final", "q1")
    assert [e.role for e in ledger.entries] == ["root"] * 3
    assert p.input_tokens == sum(e.input_tokens for e in ledger.entries)
    traj = load_trajectory(p.trajectory)
    searches = [it.extra["search"] for it in traj.iterations[:2]]
    assert [s["query"] for s in searches] == ["acme revenue", "fiscal 2022"]
    assert {"file": "acme_2022_10k", "page": 2} in searches[0]["results"]
    assert traj.result.answer == ["$4.2 billion"]
    # an iteration's final answer is text (as the rlm loop and rlms write it), not the list
    assert [it.final_answer for it in traj.iterations] == [None, None, '["$4.2 billion"]']
    # the search results were shown to the model with file and page labels
    second_call = system.client.calls[1]
    assert "[FILE: acme_2022_10k | PAGE: 2]" in second_call[-1]["content"]


def test_bm25_agent_last_turn_forbids_search(tmp_path):
    system, gov, _ = _system(
        tmp_path, "bm25-agent", ["SEARCH: acme", "SEARCH: still searching"], max_iterations=2
    )
    p = system.answer(Q1, gov)
    assert p.steps == 2 and p.stop_reason == "forced" and p.answer == []
    assert p.stop_axis == "steps"  # the agent's own turn limit
    assert system.client.calls[1][-1]["content"] == LAST_TURN


def test_bm25_agent_step_budget_forces_a_final_answer(tmp_path):
    answer = {"answer": ["4.2 billion"], "citations": []}
    system, gov, ledger = _system(
        tmp_path, "bm25-agent", ["SEARCH: acme", json.dumps(answer)], budget=Budget(max_steps=1)
    )
    p = system.answer(Q1, gov)
    # the forced turn answered: `forced`, and both root calls are steps
    assert p.stop_reason == "forced" and p.answer == ["4.2 billion"] and p.steps == 2
    assert p.stop_axis == "steps" and p.to_madqa()["stop_axis"] == "steps"
    assert len(ledger.entries) == 2
    assert "root-step budget exhausted" in system.client.calls[1][-1]["content"]


def test_static_rag_cites_the_retrieved_page_holding_a_free_text_answer(tmp_path):
    system, gov, ledger = _system(tmp_path, "static-rag", ["$4.2 billion"], k=3)
    p = system.answer(Q1, gov)
    assert p.answer == ["$4.2 billion"] and p.steps == 1
    assert p.citations == [{"file": "acme_2022_10k", "page": 2}]
    assert load_trajectory(p.trajectory).iterations[0].final_answer == '["$4.2 billion"]'
    prompt = system.client.calls[0][0]["content"]
    assert prompt.count("[FILE: ") == 3 and prompt.rstrip().endswith(Q1.question)


def test_static_rag_without_a_match_cites_all_k_pages(tmp_path):
    system, gov, _ = _system(tmp_path, "static-rag", ["unknown value"], k=2)
    p = system.answer(Q1, gov)
    assert len(p.citations) == 2


def test_static_rag_model_failure_is_an_error_prediction(tmp_path):
    system, gov, _ = _system(tmp_path, "static-rag", [{"error": "server exploded"}])
    p = system.answer(Q1, gov)
    assert p.stop_reason == "error" and "server exploded" in p.error and p.answer == []


def test_unknown_system_is_a_config_error():
    with pytest.raises(ConfigError, match="bm25-agent"):
        make_system("magic", SystemConfig(corpus=CORPUS, model="offline"))


def test_one_step_budget_means_the_same_in_every_system(tmp_path):
    """`--max-steps 1`: one ordinary turn plus the forced answering turn, counted as root-model
    calls (2 steps, stop `forced`) in rlm and bm25-agent alike; static-rag makes its one call."""
    from rlm_docs.engine import RLM
    from rlm_docs.models import ScriptedClient

    one = Budget(max_steps=1)
    for name in ("a", "s"):
        (tmp_path / name).mkdir()
    answer = json.dumps({"answer": ["4.2 billion"], "citations": []})
    agent, gov, ledger = _system(tmp_path / "a", "bm25-agent", ["SEARCH: acme", answer], one)
    p = agent.answer(Q1, gov)
    assert (p.steps, p.stop_reason, p.answer) == (2, "forced", ["4.2 billion"])
    assert p.steps == sum(e.role == "root" for e in ledger.entries)

    rag, gov, ledger = _system(tmp_path / "s", "static-rag", ["$4.2 billion"], one)
    p = rag.answer(Q1, gov)
    assert (p.steps, p.stop_reason) == (1, "final")

    ledger = Ledger()
    root = ScriptedClient(["```repl\nx = 1\n```", "FINAL(4.2 billion)", answer])
    rlm = RLM(CORPUS, model=root, sub_model=ScriptedClient([]), budget=one, ledger=ledger)
    p = rlm.ask(Q1.question, question_id=Q1.id)
    assert (p.steps, p.stop_reason, p.answer) == (2, "forced", ["4.2 billion"])
    roots = [e for e in ledger.entries if e.role == "root"]
    assert p.steps == len(roots) and [e.role for e in ledger.entries].count("extract") == 1
