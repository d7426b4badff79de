"""Each model call's purpose reaches the endpoint as data (request headers), not as words in
the prompt: an extraction call is recognisable as one, a sub-call as one, a root turn as one."""

from pathlib import Path

import pytest

from rlm_docs.call_purpose import ROLE_HEADER, SYSTEM_HEADER
from rlm_docs.corpus import Corpus
from rlm_docs.engine import RLM
from rlm_docs.eval.dataset import load_questions
from rlm_docs.governor import Governor
from rlm_docs.systems import SystemConfig, make_system
from tests.fixtures.eval.support import DOCS as EVAL_DOCS
from tests.fixtures.eval.support import QUESTIONS
from tests.servers.chat import ChatServer

DOCS = {"acme_2020_10k": ["Cover.", "Total revenue was $412 million in 2020."]}
KEY = "sk-test-purpose-0123456789abcdef"
EXTRACTED = '{"values": ["$412 million"], "citations": [{"file": "acme_2020_10k", "page": 2}]}'


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return Corpus.from_documents(DOCS).save(tmp_path_factory.mktemp("corpus") / "store")


def _reply(messages: list[dict]) -> str:
    """A root that reads with one sub-call and answers in free text; the extraction's JSON."""
    if messages[0]["role"] != "system":  # one user message: a sub-call or the extraction
        return EXTRACTED if "RLM Analysis Response" in messages[0]["content"] else "412"
    if not any(m["role"] == "assistant" for m in messages):
        return "```repl\nr = llm_query('Revenue? ' + page('acme_2020_10k', 2))\n```"
    return "FINAL(Revenue was $412 million, acme_2020_10k page 2.)"


def _roles(srv: ChatServer) -> list[tuple[str | None, str | None]]:
    def get(headers: dict[str, str], name: str) -> str | None:
        return next((v for k, v in headers.items() if k.lower() == name.lower()), None)

    return [(get(r.headers, ROLE_HEADER), get(r.headers, SYSTEM_HEADER)) for r in srv.requests]


def test_the_endpoint_is_told_each_calls_role(store, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("RLM_DOCS_CACHE", "off")
    with ChatServer(reply=_reply, flavor="openai", api_key=KEY) as srv:
        rlm = RLM(store, model=f"openai:gpt-5-mini@{srv.base_url}")
        pred = rlm.ask("What was Acme's 2020 revenue?")
        bodies = [r.body for r in srv.requests]
    assert pred.answer == ["$412 million"]
    assert _roles(srv) == [("root", "rlm"), ("sub", "rlm"), ("root", "rlm"), ("extract", "rlm")]
    # Nothing about the role is written into what the model reads.
    for body in bodies:
        for m in body["messages"]:
            assert "rlm-docs:" not in m["content"] and "[rlm-docs" not in m["content"]


def test_a_baseline_names_itself_to_the_endpoint(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("RLM_DOCS_CACHE", "off")
    question = load_questions(QUESTIONS)[4]
    with ChatServer(reply=lambda m: '{"values": ["12,500"]}', flavor="openai", api_key=KEY) as srv:
        config = SystemConfig(
            corpus=Corpus.from_documents(EVAL_DOCS), model=f"openai:gpt-5-mini@{srv.base_url}"
        )
        make_system("static-rag", config).answer(question, Governor(question_id=question.id))
    assert _roles(srv) == [("root", "static-rag")]
