"""`sleuth` with scripted models: screening labels parsed, IR pages dropped, the all-IR case
(clues only), the difficulty strategy, the evidence table, and budget cuts."""

import json

import pytest

from rlm_docs.call_purpose import current
from rlm_docs.corpus import Corpus
from rlm_docs.engine.trajectory import load_trajectory
from rlm_docs.eval.decomposition import decompose
from rlm_docs.governor import Budget, Governor, Ledger
from rlm_docs.models import ScriptedClient
from rlm_docs.questions import Question
from rlm_docs.systems import SystemConfig, make_system
from rlm_docs.systems.sleuth import parse_clues, parse_label

DOCS = {
    "acme": [
        "Acme revenue was $4.2 billion in 2022.",
        "Acme revenue by segment: tools, parts.",
        "Acme revenue outlook for the next year.",
    ]
}
CORPUS = Corpus.from_documents(DOCS)
QUESTION = Question(id="q1", question="What was Acme revenue in 2022?", answer_variants=[["x"]])
EVIDENCE = [{"page": "acme, page 1", "evidence": "$4.2 billion", "source": "text"}]
ANSWER = json.dumps(
    {"values": ["$4.2 billion"], "citations": [{"file": "acme", "page": 1}], "evidence": EVIDENCE}
)
CLUE = "CLUE: location: top | content: revenue $4.2 billion | key insight: the figure asked"


def _page(messages):
    return int(messages[0]["content"].split("| PAGE: ", 1)[1].split("]", 1)[0])


def _sub(labels):
    """A sub-model answering clue, screening and difficulty prompts; `labels` by page."""

    def reply(messages):
        kind = current().prompt  # the call's purpose says which prompt it is
        if kind == "sleuth-clue":
            return CLUE if _page(messages) == 1 else "CLUE: none"
        if kind == "sleuth-screen":
            return labels[_page(messages)]
        assert kind == "sleuth-difficulty"
        return "DIFFICULTY: easy\nSTRATEGY: read the figure off page 1."

    return reply


def _system(tmp_path, sub_replies, root, budget=None):
    (tmp_path / "logs").mkdir(exist_ok=True)
    config = SystemConfig(
        corpus=CORPUS, model="offline", budget=budget or Budget(), log_dir=str(tmp_path / "logs")
    )
    system = make_system("sleuth", config)
    system.client, system.sub_client = ScriptedClient(root), ScriptedClient(sub_replies)
    ledger = Ledger()
    return system, Governor(config.budget, ledger=ledger), ledger


@pytest.mark.parametrize(
    ("reply", "label"),
    [
        ("LABEL: CR\nREASON: holds the figure", "CR"),
        ("**Label:** ir\nReason: nothing here", "IR"),
        ("label: R\nreason: related", "R"),
        ("This page is IR because it is about parts.", "IR"),
        ("no idea", None),
    ],
)
def test_screening_labels_are_parsed(reply, label):
    assert parse_label(reply)[0] == label


def test_clues_are_parsed_into_location_content_and_insight():
    assert parse_clues(CLUE + "\nCLUE: none") == [
        {"location": "top", "content": "revenue $4.2 billion", "insight": "the figure asked"}
    ]
    assert parse_clues("CLUE: none") == []


def test_ir_pages_are_dropped_and_the_decision_gets_the_rest(tmp_path):
    labels = {
        1: "LABEL: CR\nREASON: holds the figure",
        2: "LABEL: R\nREASON: segments",
        3: "LABEL: IR\nREASON: the future",
    }
    system, gov, ledger = _system(tmp_path, [_sub(labels)] * 7, [ANSWER])
    p = system.answer(QUESTION, gov)
    assert (p.answer, p.steps, p.sub_calls, p.stop_reason) == (["$4.2 billion"], 1, 7, "final")
    decision = system.client.calls[0][0]["content"]
    assert system.client.purposes[0].prompt == "sleuth-decide"
    assert "[FILE: acme | PAGE: 1]" in decision and "[FILE: acme | PAGE: 2]" in decision
    assert "[FILE: acme | PAGE: 3]" not in decision  # IR: dropped
    assert decision.index("Label: CR") < decision.index("Label: R (segments)")
    assert "1 page(s) judged irrelevant were dropped" in decision
    assert "Strategy: (easy) read the figure off page 1." in decision
    assert "content: revenue $4.2 billion | insight: the figure asked" in decision
    assert p.info["evidence"] == EVIDENCE
    traj = load_trajectory(p.trajectory)
    turn = traj.iterations[0]
    assert [(s["page"], s["label"]) for s in turn.extra["screening"]] == [
        (1, "CR"),
        (2, "R"),
        (3, "IR"),
    ]
    assert turn.extra["evidence"] == EVIDENCE
    assert [len(b.result.sub_calls) for b in turn.code_blocks] == [6, 1]
    record = decompose(traj, [e.to_dict() for e in ledger.entries], CORPUS)
    assert record.strategies == ["search-first", "chunked-map", "screened-pages"]
    assert record.fanouts == [6] and record.sub_calls == 7


def test_all_ir_keeps_only_the_clues_and_says_so(tmp_path):
    labels = dict.fromkeys((1, 2, 3), "LABEL: IR\nREASON: off topic")
    system, gov, ledger = _system(tmp_path, [_sub(labels)] * 7, [ANSWER])
    p = system.answer(QUESTION, gov)
    decision = system.client.calls[0][0]["content"]
    assert "All 3 retrieved pages were judged irrelevant (IR); only the clues" in decision
    assert "[FILE: acme | PAGE: 1] clues:" in decision and "revenue $4.2 billion" in decision
    assert "Acme revenue outlook" not in decision  # no page text
    traj = load_trajectory(p.trajectory)
    record = decompose(traj, [e.to_dict() for e in ledger.entries], CORPUS)
    assert record.strategies == ["search-first", "chunked-map", "clues-only", "screened-pages"]


def test_a_sub_call_limit_screens_a_prefix_and_forces_the_decision(tmp_path):
    labels = dict.fromkeys((1, 2, 3), "LABEL: R\nREASON: maybe")
    budget = Budget(max_sub_calls=3)
    system, gov, ledger = _system(tmp_path, [_sub(labels)] * 3, [ANSWER], budget)
    p = system.answer(QUESTION, gov)
    # one page's two calls fit, then the difficulty call; the decision still answers
    assert (p.sub_calls, p.stop_reason, p.stop_axis) == (3, "forced", "sub_calls")
    assert p.answer == ["$4.2 billion"]
    decision = system.client.calls[0][0]["content"]
    assert "[FILE: acme | PAGE: 1]" in decision and "PAGE: 2]" not in decision


def test_a_refused_decision_is_a_budget_stop(tmp_path):
    labels = dict.fromkeys((1, 2, 3), "LABEL: R\nREASON: maybe")
    budget = Budget(max_steps=0)
    system, gov, _ = _system(tmp_path, [_sub(labels)] * 7, [ANSWER], budget)
    p = system.answer(QUESTION, gov)
    assert (p.stop_reason, p.stop_axis, p.answer) == ("budget", "steps", [])
    assert system.client.calls == []


def test_a_refused_difficulty_call_decides_without_a_strategy(tmp_path):
    labels = dict.fromkeys((1, 2, 3), "LABEL: CR\nREASON: figures")
    budget = Budget(max_sub_calls=6)  # every page's two calls, not the assessment
    system, gov, _ = _system(tmp_path, [_sub(labels)] * 6, [ANSWER], budget)
    p = system.answer(QUESTION, gov)
    assert (p.sub_calls, p.stop_reason, p.stop_axis) == (6, "forced", "sub_calls")
    decision = system.client.calls[0][0]["content"]
    assert "Strategy: (none: the budget refused the difficulty assessment)" in decision
    assert "[FILE: acme | PAGE: 3]" in decision
