"""The viewer's sub-call tree and decomposition data (`rlm_docs.viewer.tree`, `viewer.load`) on
a scripted run of known structure, and n/a for a run recorded before decomposition existed."""

import json
from pathlib import Path

import pytest

from rlm_docs.corpus import Corpus
from rlm_docs.engine import RLM
from rlm_docs.eval.decomposition import flat_columns
from rlm_docs.eval.decomposition_file import record_decomposition
from rlm_docs.models import ScriptedClient
from rlm_docs.viewer import load_source
from tests.fixtures.engine import repl

DOCS = {
    "acme_2020_10k": ["ACME annual report 2020.", "Revenue was $412 million.", "Assets."],
    "globex_2021_10k": ["Globex 2021.", "Net income was $55 million."],
}
DONE = repl('res = {"answer": ["done"], "citations": []}') + "\nFINAL_VAR(res)"
MAP = (
    "first = llm_query_batched(['a' * 10, 'b' * 20, 'c' * 30])\n"
    "second = llm_query_batched(['d' * 100] * 5)\n"
    "child = rlm_query('What does the child find?')"
)
RUNS = {
    # batches of 3 and 5, a child run that makes one llm_query, then a failing cell
    "q-map": ([repl(MAP), repl("x = llm_query('e' * 7)") + "\nFINAL(c)", repl("1 / 0"), DONE], 9),
    "q-grep": ([repl("hits = grep('Revenue')"), DONE], 0),
}


def make_decomposed_run(root: Path) -> Path:
    """An eval-like run directory: `q-map` and `q-grep` with their decomposition records, and
    `q-old`, a copy of `q-grep` as a run made before the record existed (no fields, no log)."""
    store = Corpus.from_documents(DOCS).save(root / "store")
    corpus = Corpus.load(store)
    rows = []
    for qid, (replies, subs) in RUNS.items():
        rlm = RLM(
            store,
            model=ScriptedClient(replies),
            sub_model=ScriptedClient(["ok"] * subs),
            log_dir=root / "trajectories",
        )
        pred = rlm.ask(f"Question {qid}?", question_id=qid)
        ledger = [e.to_dict() for e in rlm.ledger.entries]
        row = pred.to_madqa() | {"id": qid, "ledger": ledger}
        rows.append(row | flat_columns(record_decomposition(pred.trajectory, ledger, corpus)))
    old = {k: v for k, v in rows[1].items() if k not in flat_columns(None)}
    rows.append(old | {"id": "q-old", "trajectory": None})
    (root / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return load_source(make_decomposed_run(tmp_path_factory.mktemp("run")))


def _kinds(node):
    return [node["kind"]] + [k for child in node.get("children", []) for k in _kinds(child)]


def test_tree_nests_turns_cells_batches_and_the_child_run(data):
    q = next(q for q in data["questions"] if q["id"] == "q-map")
    tree = q["tree"]
    turns = tree["children"]
    assert [t["label"] for t in turns] == ["turn 1", "turn 2", "turn 3"]
    cell = turns[0]["children"][0]
    first, second, child = cell["children"]
    assert (first["kind"], first["size"], len(first["children"])) == ("batch", 3, 3)
    assert (second["kind"], second["size"], len(second["children"])) == ("batch", 5, 5)
    # calls are listed in the order they finished (concurrently)
    assert sorted(c["chars"] for c in first["children"]) == [10, 20, 30] and first["chars"] == 60
    assert second["chars"] == 500
    assert child["kind"] == "child" and _kinds(child) == ["child", "turn", "cell", "call"]
    assert child["children"][0]["children"][0]["children"][0]["chars"] == 7
    assert turns[1]["children"][0]["error"] is True
    # every node's totals are its own call plus everything below it
    ledger_sub = sum(
        e["input_tokens"] + e["output_tokens"] for e in q["ledger"] if e["role"] == "sub"
    )
    batched = first["tokens"] + second["tokens"]
    assert batched + child["children"][0]["children"][0]["tokens"] == ledger_sub
    assert cell["chars"] == 60 + 500 + child["chars"]
    assert tree["tokens"] == sum(t["tokens"] for t in turns)


def test_decomposition_is_shown_and_old_runs_are_na(data):
    by_id = {q["id"]: q for q in data["questions"]}
    d = by_id["q-map"]["decomposition"]
    assert (d["fanouts"], d["child_runs"], d["cell_errors"]) == ([3, 5], 1, 1)
    assert d["sub_calls_by_depth"] == {"0": 8, "1": 1}
    assert d["strategies"] == ["chunked-map", "recursive"]
    assert by_id["q-grep"]["decomposition"]["strategies"] == ["grep"]
    assert by_id["q-old"]["decomposition"] is None and by_id["q-old"]["tree"] is None


def test_viewer_entries_carry_the_answer_record_old_records_by_the_caveat_rule():
    from rlm_docs.viewer.load import question_entry

    new = {"id": "a", "answer": ["0.627"], "explanation": "9,912 / 15,803", "caveat": "avg: 0.595"}
    entry = question_entry(new, None, 0, "results.jsonl:1")
    assert (entry["answer"], entry["explanation"], entry["caveat"]) == (
        ["0.627"],
        "9,912 / 15,803",
        "avg: 0.595",
    )
    old = {"id": "b", "answer": ["Not answerable", "Caveat: no survey about Lincoln"]}
    entry = question_entry(old, None, 1, "results.jsonl:2")
    assert (entry["answer"], entry["caveat"]) == (["Not answerable"], "no survey about Lincoln")


def test_a_question_that_needs_a_judge_shows_no_verdict_in_the_viewer():
    from rlm_docs.viewer.load import question_entry

    row = {"id": "p", "answer": ["No"], "caveat": "", "stage": "needs_judge", "score": None}
    entry = question_entry(row | {"anls": 0.9, "correct": None}, None, 0, "results.jsonl:1")
    assert (entry["correct"], entry["score"]) == (None, None)  # not decided by its ANLS*
