"""The offline model's roles: extractive reader, extract parser, root policy replies."""

import json
from dataclasses import replace

from rlm_docs.call_purpose import Purpose, calling
from rlm_docs.models import make_client
from rlm_docs.models.offline import OfflineClient
from rlm_docs.offline import detect_role
from rlm_docs.offline.question import terms, years
from rlm_docs.offline.reader import NOT_FOUND, read


def test_reader_returns_best_rows_verbatim_with_numbers():
    prompt = (
        "Question: What was net property, plant and equipment in 2018?\n"
        "Document: r page 3\n\n"
        "The company makes adhesives.\n"
        "Property, plant and equipment - net      $ 8,738     $ 8,866\n"
        "Total assets                              36,500     37,987\n"
    )
    reply = read(prompt)
    assert reply.splitlines()[0] == "Property, plant and equipment - net  $ 8,738  $ 8,866"
    assert "adhesives" not in reply


def test_reader_without_match_says_so():
    assert read("Question: dividend policy of Zorblax?\n\nThe sky is blue.") == NOT_FOUND


def test_terms_and_years_drop_boilerplate():
    q = "Assume you are an analyst. What is the FY2018 capex for 3M? Answer in USD millions."
    assert terms(q)[:3] == ["2018", "capex", "3m"]
    # Abbreviations are expanded into the words filings use.
    assert terms(q)[3:] == [
        "capital",
        "expenditures",
        "purchases",
        "property",
        "plant",
        "equipment",
    ]
    assert years(q) == ["2018"]


def test_roles_and_completion_accounting():
    client = make_client("offline")
    assert isinstance(client, OfflineClient) and client.backend == "offline"
    # The role is the call's purpose, never the prompt's wording.
    marked = [{"role": "system", "content": "[rlm-docs:root docs]\n..."}]
    assert detect_role(marked) == "sub"
    assert detect_role(marked, Purpose("root", "rlm", "docs")) == "root"
    assert detect_role(marked, Purpose("extract", "rlm", "docs")) == "extract"
    assert detect_role([{"role": "user", "content": "Question: x"}]) == "sub"
    msgs = [
        {
            "role": "user",
            "content": "Question: q\n\nRLM Analysis Response:\n42 units (Found in doc_a, page 3)",
        }
    ]
    with calling(Purpose("extract", "rlm", "docs")):
        c = client.complete(msgs)
    assert json.loads(c.text) == {
        "values": ["42 units"],
        "explanation": "",
        "caveat": "",
        "citations": [{"file": "doc_a", "page": 3}],
    }
    assert c.cost_usd == 0.0 and c.usage.input_tokens > 0 and c.usage.output_tokens > 0
    assert c.usage_source == "tiktoken"
    with calling(Purpose("extract", "rlm", "docs")):
        assert client.complete(msgs).text == c.text  # deterministic


def test_root_policy_turns():
    client = OfflineClient()
    root = Purpose("root", "rlm", "docs", "What is X of Acme?")
    system = {"role": "system", "content": "You answer questions. Question: What is X?"}
    first = {"role": "user", "content": "Go"}
    with calling(root):
        code = client.complete([system, first]).text
    assert "```repl" in code and "'question': 'What is X of Acme?'" in code
    assert "answer_from_corpus(plan, search, page, files, cite, llm_query_batched)" in code
    assert "def answer_from_corpus(" in code and "cite(" in code
    ready = {"role": "user", "content": "ANSWER: ['7']\nOFFLINE_ANSWER_READY"}
    assistant = {"role": "assistant", "content": code}
    forced = {"role": "user", "content": "ANSWER: ['7']\nOFFLINE_ANSWER_READY\nNo more code."}
    failed = {"role": "user", "content": "NameError: name 'x' is not defined"}
    with calling(root):
        assert client.complete([system, first, assistant, ready]).text.endswith(
            "FINAL_VAR(final_answer)"
        )
        assert client.complete([system, first, assistant, failed]).text == (
            "FINAL(No answer found in the documents.)"
        )
    no_code = replace(root, code_runs=False)  # a forced last turn: no code will run
    with calling(no_code):
        assert client.complete([system, first, assistant, forced]).text.endswith(
            "FINAL_VAR(final_answer)"
        )
        assert client.complete([system, first]).text == "FINAL(No answer found in the documents.)"


def test_baseline_prompts_are_answered_by_the_baseline_policy():
    """`make_client("offline")` itself dispatches requests whose purpose names a baseline."""
    from rlm_docs.templates import render

    client = make_client("offline")
    system = {"role": "system", "content": render("bm25_agent", k=5, max_iterations=10)}
    question = {"role": "user", "content": "How many employees did Globex have in 2021?"}
    purpose = Purpose("root", "bm25-agent", "bm25-agent", question["content"])
    assert detect_role([system, question], purpose) == "baseline"
    with calling(purpose):
        reply = client.complete([system, question])
    assert reply.text.startswith("SEARCH: ") and "globex" in reply.text
    assert reply.cost_usd == 0.0 and reply.usage.input_tokens > 0
