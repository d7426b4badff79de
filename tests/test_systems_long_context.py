import json

import pytest

from rlm_docs.corpus import Corpus
from rlm_docs.engine.trajectory import load_trajectory
from rlm_docs.errors import ConfigError
from rlm_docs.eval.dataset import load_questions
from rlm_docs.governor import Budget, Governor
from rlm_docs.systems import SystemConfig, make_system
from rlm_docs.systems.windows import TRUNCATION_NOTE, fit_prefix
from rlm_docs.tokens import count_message_tokens, count_tokens
from tests.fixtures.eval.support import DOCS, QUESTIONS, run_system, server_env
from tests.servers.chat import ChatServer

pytestmark = pytest.mark.usefixtures(server_env.__name__)
CORPUS = Corpus.from_documents(DOCS)
Q1 = load_questions(QUESTIONS)[0]  # Acme revenue, on acme_2022_10k page 2
ANSWER = {"answer": ["$4.2 billion"], "citations": [{"file": "acme_2022_10k", "page": 2}]}


def _run(tmp_path, model, budget=None, **options):
    _, prediction, ledger = run_system(tmp_path, "long-context", model, budget, **options)
    return prediction, ledger


def test_the_whole_corpus_fits_and_is_sent_unchanged_in_one_call(tmp_path):
    with ChatServer(reply=lambda m: json.dumps(ANSWER)) as srv:
        p, ledger = _run(tmp_path, f"openai:gpt-4o-mini@{srv.base_url}")
        prompt = srv.requests[0].body["messages"][0]["content"]
    assert CORPUS.render() in prompt and TRUNCATION_NOTE not in prompt
    assert (p.answer, p.citations, p.steps, p.stop_reason) == (
        ["$4.2 billion"],
        [{"file": "acme_2022_10k", "page": 2}],
        1,
        "final",
    )
    assert [e.role for e in ledger.entries] == ["root"] and p.sub_calls == 0
    context = p.info["context"]
    assert context["truncated"] is False and context["context_window"] == 128000  # table value
    assert context["pages_kept"] == context["pages_total"] == CORPUS.total_pages


def test_a_small_window_keeps_the_largest_page_prefix_and_records_the_cut(tmp_path):
    seen = []

    def reply(messages):
        seen.append(messages[0]["content"])
        return json.dumps({"answer": ["not in the text I was given"], "citations": []})

    with ChatServer(reply=reply) as srv:
        p, _ = _run(
            tmp_path, f"openai:gpt-4o-mini@{srv.base_url}", context_window=600, reply_tokens=100
        )
    prompt = seen[0]
    context = p.info["context"]
    assert context["truncated"] is True and context["limited_by"] == "context_window"
    kept = context["pages_kept"]
    assert 0 < kept < CORPUS.total_pages
    assert count_message_tokens([{"role": "user", "content": prompt}]) <= 600 - 100
    order = [(d.name, n) for d in CORPUS.documents for n in range(1, d.num_pages + 1)]
    assert context["last_page"] == {"file": order[kept - 1][0], "page": order[kept - 1][1]}
    for i, (doc, n) in enumerate(order):  # exactly the first `kept` pages are shown
        assert (CORPUS.page(doc, n) in prompt) == (i < kept)
    assert TRUNCATION_NOTE in prompt and f"Only the first {kept} of 8 pages" in prompt
    # the trajectory records the cut, without copying the corpus text
    traj = load_trajectory(p.trajectory)
    assert traj.metadata.extra["context"] == context
    assert traj.iterations[0].extra["context"] == context
    assert CORPUS.page(*order[0]) not in traj.iterations[0].prompt[0]["content"]
    assert traj.result.info == {"context": context}


def test_fit_prefix_is_exact_at_page_boundaries():
    for available in (60, 150, 300, 10_000):
        prefix = fit_prefix(CORPUS, available)
        assert prefix.tokens == count_tokens(prefix.text) <= available
        if prefix.truncated:
            # one more page would not have fitted
            bigger = fit_prefix(CORPUS, prefix.tokens + 1)
            assert bigger.pages == prefix.pages
    assert fit_prefix(CORPUS, 10_000).text == CORPUS.render()
    assert fit_prefix(CORPUS, 0).pages == 0


def test_an_input_token_budget_shrinks_the_context_instead_of_being_refused(tmp_path):
    with ChatServer(reply=lambda m: json.dumps(ANSWER)) as srv:
        p, ledger = _run(
            tmp_path, f"openai:gpt-4o-mini@{srv.base_url}", budget=Budget(max_input_tokens=400)
        )
    assert p.info["context"]["limited_by"] == "max_input_tokens"
    assert p.info["context"]["truncated"] is True
    assert (p.stop_reason, p.stop_axis) == ("forced", "input_tokens")  # the budget's cut
    assert ledger.entries[0].input_tokens <= 400


def test_a_dollar_budget_too_small_for_the_prompt_is_refused_by_the_governor(tmp_path):
    with ChatServer(reply=lambda m: json.dumps(ANSWER)) as srv:
        p, ledger = _run(
            tmp_path, f"openai:gpt-4o-mini@{srv.base_url}", budget=Budget(max_cost_usd=0.000001)
        )
        assert srv.requests == []  # refused before any request
    assert p.stop_reason == "budget" and p.answer == [] and ledger.entries == []
    assert "dollar budget exhausted" in load_trajectory(p.trajectory).iterations[0].notice


def test_unknown_context_window_is_a_config_error_naming_the_fix(tmp_path):
    script = tmp_path / "replies.json"
    script.write_text("[]")
    with pytest.raises(ConfigError, match="context window unknown.*--context-window"):
        _run(tmp_path, f"scripted:{script}")


def test_offline_long_context_answers_from_the_page_holding_the_answer(tmp_path):
    p, ledger = _run(tmp_path, "offline")
    assert p.answer == ["$4.2 billion"]
    assert p.citations == [{"file": "acme_2022_10k", "page": 2}]
    assert len(ledger.entries) == 1 and p.info["context"]["context_window"] == 131072


def test_offline_long_context_cannot_answer_from_pages_cut_off(tmp_path):
    q = load_questions(QUESTIONS)[3]  # Initech, the last document
    config = SystemConfig(corpus=CORPUS, model="offline", options={"context_window": 8700})
    system = make_system("long-context", config)
    p = system.answer(q, Governor(question_id=q.id))
    assert p.info["context"]["truncated"] is True
    assert all(c["file"] != "initech_2023_8k" for c in p.citations)
    assert "Bill Lumbergh" not in " ".join(p.answer)


def test_a_character_cap_keeps_whole_pages_within_it():
    whole = CORPUS.render()
    cap = len(whole) // 2
    prefix = fit_prefix(CORPUS, 10_000, max_chars=cap)
    assert prefix.truncated and prefix.truncated_by == "chars" and len(prefix.text) <= cap
    bigger = fit_prefix(CORPUS, 10_000, max_chars=cap + len(CORPUS.page(**_next(prefix))) + 40)
    assert bigger.pages == prefix.pages + 1  # exactly the next page fits with that much more
    assert fit_prefix(CORPUS, 10_000, max_chars=len(whole)).text == whole


def _next(prefix):
    order = [(d.name, n) for d in CORPUS.documents for n in range(1, d.num_pages + 1)]
    doc, page = order[prefix.pages]
    return {"doc": doc, "n": page}
