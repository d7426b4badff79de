"""Decomposition records (`rlm_docs.eval.decomposition`) of scripted RLM runs whose structure
is known in advance: every figure is checked exactly, and each strategy tag has a run of its
own kind. Runs go through the real sandbox, governor and ledger."""

import json
from pathlib import Path

import pytest

from rlm_docs.corpus import Corpus
from rlm_docs.engine import RLM
from rlm_docs.eval.decomposition import FIELDS, Decomposition, decompose, flat_columns
from rlm_docs.eval.decomposition_file import record_decomposition
from rlm_docs.models import ScriptedClient
from sandbox import Limits
from tests.fixtures.engine import repl, saved_store

DOCS = {
    "acme_2020_10k": [
        "ACME Corp annual report 2020.\n\nItem 1. Business\n\nAcme makes industrial widgets.",
        "Item 7. Results of operations\n\nTotal revenue was $412 million in 2020.",
        "Item 8. Balance sheet\n\nTotal assets were $1,020 million at year end 2020.",
    ],
    "globex_2021_10k": [
        "Globex Corporation annual report 2021.\n\nWe sell consumer gadgets worldwide.",
        "Net income was $55 million in 2021.\n\nDividends per share were $1.10 in 2021.",
    ],
}
DONE = repl('res = {"answer": ["done"], "citations": []}') + "\nFINAL_VAR(res)"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return saved_store(tmp_path_factory, DOCS)


@pytest.fixture(scope="module")
def corpus(store):
    return Corpus.load(store)


def run(store, corpus, replies, subs=(), **kwargs):
    """Ask one question with scripted root replies (child runs use them too) and sub-model
    replies; the decomposition record of the run, and the run's ledger entries."""
    rlm = RLM(
        store,
        model=ScriptedClient(list(replies)),
        sub_model=ScriptedClient(list(subs)),
        **kwargs,
    )
    rlm.ask("What happened?", question_id="q")
    ledger = [e.to_dict() for e in rlm.ledger.entries]
    return decompose(rlm.last_trajectory, ledger, corpus).to_dict(), ledger


def test_known_structure_gives_exact_figures(store, corpus):
    # A slice from the middle of acme page 1 to the middle of acme page 2: exactly two pages.
    a = corpus.page_offset("acme_2020_10k", 1) + 40
    b = corpus.page_offset("acme_2020_10k", 2) + 30
    three = ["x" * 10, "y" * 20, "z" * 30]
    five = [f"chunk {i}: " + "w" * (100 * i) for i in range(1, 6)]
    code = (
        f"first = llm_query_batched({three!r})\n"
        f"second = llm_query_batched({five!r})\n"
        "child = rlm_query('What does the child find?')\n"
        f"piece = context[{a}:{b}]\n"
        "print(len(piece))"
    )
    replies = [repl(code), "FINAL(child answer)", repl("1 / 0"), DONE]
    record, ledger = run(store, corpus, replies, subs=["ok"] * 8)
    prompts = three + five
    assert record == {
        "sub_calls": 8,
        "sub_calls_by_depth": {"0": 8},
        "batches": 2,
        "fanout_max": 5,
        "fanout_mean": 4.0,
        "fanouts": [3, 5],
        "child_runs": 1,
        "sub_call_chars": sum(len(p) for p in prompts),
        "sub_call_tokens": sum(e["input_tokens"] for e in ledger if e["role"] == "sub"),
        "max_sub_call_chars": len(five[-1]),
        "pages_looked": 2,
        "docs_looked": 1,
        "corpus_share_read": round((b - a) / corpus.rendered_chars, 6),
        "cells": 3,
        "cell_errors": 1,
        "restarts": 0,
        "cells_unanalysed": 0,
        "strategies": ["context-slicing", "chunked-map", "recursive"],
    }
    assert record["sub_call_tokens"] > 0
    assert list(record) == list(FIELDS)


def test_sub_calls_of_a_child_run_count_at_depth_one(store, corpus):
    replies = [
        repl("a = llm_query('root asks')\nb = rlm_query('child')"),
        repl("c = llm_query_batched(['one', 'two'])") + "\nFINAL(from the child)",
        DONE,
    ]
    record, _ = run(store, corpus, replies, subs=["ok"] * 3)
    assert record["sub_calls_by_depth"] == {"0": 1, "1": 2}
    assert (record["sub_calls"], record["child_runs"], record["fanouts"]) == (3, 1, [2])
    assert record["cells"] == 3  # two root cells and one child cell
    assert record["strategies"] == ["chunked-map", "recursive"]


def test_a_restarted_sandbox_is_counted(store, corpus):
    replies = [repl("while True:\n    pass"), DONE]
    record, _ = run(store, corpus, replies, limits=Limits(wall_s=1.0, cpu_s=2))
    assert (record["cells"], record["cell_errors"], record["restarts"]) == (2, 1, 1)


@pytest.mark.parametrize(
    "code, subs, tags, pages",
    [
        (
            "hits = search('revenue', k=2)\ntext = page(hits[0]['file'], hits[0]['page'])",
            [],
            ["search-first", "direct-read"],
            None,  # the pages search returned, checked below
        ),
        ("hits = grep('Total')", [], ["grep"], 2),
        ("text = pages('acme_2020_10k', 2, 3)", [], ["direct-read"], 2),
        ("text = context[:50]", [], ["context-slicing"], 1),
        ("notes = llm_query_batched(['a', 'b', 'c'])", ["n"] * 3, ["chunked-map"], 0),
        (
            "notes = llm_query_batched(['a', 'b', 'c'])\nfinal = llm_query('combine: ' + str(notes))",
            ["n"] * 4,
            ["chunked-map", "map-reduce"],
            0,
        ),
        ("found = rlm_query('look deeper')", [], ["recursive"], 0),
    ],
)
def test_one_scripted_run_per_strategy(store, corpus, code, subs, tags, pages):
    replies = [repl(code), "FINAL(child)", DONE] if "rlm_query" in code else [repl(code), DONE]
    record, _ = run(store, corpus, replies, subs=subs)
    assert record["strategies"] == tags
    if pages is None:
        hits = corpus.search("revenue", k=2)
        pages = len({(h.document, h.page) for h in hits})
    assert record["pages_looked"] == pages


def test_a_read_page_counts_whole_and_a_search_hit_counts_nothing_in_the_share(store, corpus):
    read, _ = run(store, corpus, [repl("text = page('globex_2021_10k', 2)"), DONE])
    span = corpus.rendered_chars - corpus.page_offset("globex_2021_10k", 2)  # the last page
    assert read["corpus_share_read"] == round(span / corpus.rendered_chars, 6)
    assert (read["pages_looked"], read["docs_looked"]) == (1, 1)
    searched, _ = run(store, corpus, [repl("hits = search('revenue')"), DONE])
    assert searched["corpus_share_read"] == 0.0 and searched["pages_looked"] >= 1


def test_text_code_derives_from_context_is_aligned_back_to_its_page(store, corpus):
    # A regex over the whole context cannot be followed through the code: the line it sends
    # to a sub-call is found verbatim in the corpus and counts its characters and its page.
    line = "Total assets were $1,020 million at year end 2020."
    code = (
        "import re\n"
        "hit = re.search(r'Total assets[^\\n]*', context).group()\n"
        "note = llm_query('Summarise: ' + hit)"
    )
    record, _ = run(store, corpus, [repl(code), DONE], subs=["ok"])
    assert record["pages_looked"] == 1 and record["docs_looked"] == 1
    assert record["corpus_share_read"] == round(len(line) / corpus.rendered_chars, 6)
    # The same derivation rewritten before it is sent reaches no model verbatim: nothing counts.
    rewritten = code.replace("'Summarise: ' + hit", "hit.upper()")
    record, _ = run(store, corpus, [repl(rewritten), DONE], subs=["ok"])
    assert (record["pages_looked"], record["corpus_share_read"]) == (0, 0.0)


def test_the_no_sub_calls_ablation_has_no_fan_out(store, corpus):
    record, _ = run(store, corpus, [repl("text = page('acme_2020_10k', 1)"), DONE], sub_calls=False)
    assert (record["sub_calls"], record["batches"], record["fanout_max"]) == (0, 0, 0)
    assert record["strategies"] == ["direct-read"]


def test_flat_columns_and_the_record_stored_in_the_trajectory(store, corpus, tmp_path):
    rlm = RLM(
        store,
        model=ScriptedClient([repl("x = llm_query_batched(['a', 'b'])"), DONE]),
        sub_model=ScriptedClient(["ok", "ok"]),
        log_dir=tmp_path,
    )
    pred = rlm.ask("q?", question_id="q")
    ledger = [e.to_dict() for e in rlm.ledger.entries]
    record = record_decomposition(pred.trajectory, ledger, corpus)
    lines = [json.loads(line) for line in Path(pred.trajectory).read_text().splitlines()]
    assert lines[-1]["type"] == "result" and lines[-1]["decomposition"] == record.to_dict()
    assert Decomposition.from_dict(lines[-1]["decomposition"]) == record
    flat = flat_columns(record)
    assert flat["sub_calls_by_depth"] == '{"0": 2}' and flat["fanouts"] == [2]
    assert flat_columns(None) == dict.fromkeys(FIELDS)
    # no trajectory file (a failed system): the ledger's figures alone
    assert record_decomposition(None, ledger, corpus).sub_calls == 2


LOG = {
    "log": [
        "Date: Jan 01, 2023 || User: 11 || Instance: What is the capital of Peru ?\n"
        "Date: Jan 02, 2023 || User: 12 || Instance: Who painted the Sistine ?\n",
        "Date: Jan 03, 2023 || User: 13 || Instance: How far away is the Moon ?\n"
        "Date: Jan 04, 2023 || User: 14 || Instance: Who painted the Sistine ?\n",
    ]
}


def test_records_sent_reformatted_are_aligned_line_by_line(tmp_path_factory):
    """Records parsed out of `context` and sent one per numbered line, without their labels,
    reach no model verbatim for 32 characters, yet each counts: a field found once in the
    corpus counts its characters and page; a field found twice (the repeated question) does
    not, since which record was sent is unknown."""
    store = saved_store(tmp_path_factory, LOG)
    corpus = Corpus.load(store)
    code = (
        "recs = [l.split(' || ') for l in context.split('\\n') if l.startswith('Date:')]\n"
        "listing = '\\n'.join(f\"{i}. {r[2][10:]}\" for i, r in enumerate(recs, 1))\n"
        "note = llm_query('Label each question:\\n' + listing)"
    )
    record, _ = run(store, corpus, [repl(code), DONE], subs=["ok"])
    unique = ["What is the capital of Peru ?", "How far away is the Moon ?"]
    assert all(len(q) < 32 for q in unique)
    assert record["pages_looked"] == 2 and record["docs_looked"] == 1
    assert record["corpus_share_read"] == round(sum(map(len, unique)) / corpus.rendered_chars, 6)
