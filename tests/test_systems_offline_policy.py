import json

from rlm_docs.call_purpose import Purpose
from rlm_docs.corpus import Corpus
from rlm_docs.corpus.render import page_block
from rlm_docs.eval.dataset import load_questions
from rlm_docs.governor import Governor
from rlm_docs.offline import detect_role
from rlm_docs.offline.baselines import baseline_reply
from rlm_docs.systems import SystemConfig, make_system
from rlm_docs.systems.replies import answer_format, read_reply
from rlm_docs.templates import render
from tests.fixtures.eval.support import DOCS, QUESTIONS

CORPUS = Corpus.from_documents(DOCS)
QUESTION = "How many people did Globex employ at the end of fiscal 2021?"


def _results(query: str) -> str:
    hits = CORPUS.search(query, k=5)
    blocks = [page_block(h.document, h.page, CORPUS.page(h.document, h.page), 8000) for h in hits]
    return f"Search results for {query!r}:\n\n" + "\n\n".join(blocks)


def test_bm25_agent_policy_searches_then_answers_with_the_supporting_page():
    messages = [
        {"role": "system", "content": render("bm25_agent", k=5, max_iterations=10)},
        {"role": "user", "content": QUESTION},
    ]
    assert detect_role(messages, Purpose("root", "bm25-agent", "bm25-agent")) == "baseline"
    first = read_reply(baseline_reply(messages, "bm25-agent"))
    assert first.query and "globex" in first.query
    messages += [
        {"role": "assistant", "content": f"SEARCH: {first.query}"},
        {"role": "user", "content": _results(first.query)},
    ]
    final = read_reply(baseline_reply(messages, "bm25-agent"))
    assert final.query is None and final.structured
    assert final.answer.values == ["12,500"]
    assert final.answer.citations == [{"file": "globex_2021_10k", "page": 3}]


def test_static_rag_policy_answers_from_the_given_pages():
    hits = CORPUS.search("Initech dividend", k=3)
    pages = "\n\n".join(
        page_block(h.document, h.page, CORPUS.page(h.document, h.page), 8000) for h in hits
    )
    question = "What quarterly dividend per share did Initech declare?"
    prompt = render(
        "static_rag", k=3, pages=pages, question=question, answer_format=answer_format("x")
    )
    reply = json.loads(baseline_reply([{"role": "user", "content": prompt}], "static-rag"))
    assert reply["values"] == ["$0.25"]
    assert reply["citations"] == [{"file": "initech_2023_8k", "page": 2}]


def test_other_requests_are_not_baseline_requests():
    messages = [{"role": "user", "content": "Question: x"}]
    assert detect_role(messages) == detect_role(messages, Purpose("sub", "rlm", "docs")) == "sub"
    assert detect_role(messages, Purpose("judge")) == "sub"


def test_baseline_systems_with_the_offline_model_run_the_policy(tmp_path):
    q5 = load_questions(QUESTIONS)[4]
    config = SystemConfig(corpus=CORPUS, model="offline", log_dir=str(tmp_path))
    agent = make_system("bm25-agent", config).answer(q5, Governor(question_id="q5"))
    assert (agent.answer, agent.steps, agent.stop_reason) == (["12,500"], 2, "final")
    assert agent.citations == [{"file": "globex_2021_10k", "page": 3}]
    rag = make_system("static-rag", config).answer(q5, Governor(question_id="q5"))
    assert (rag.answer, rag.steps) == (["12,500"], 1)
