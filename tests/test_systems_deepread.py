"""`deepread` with a scripted model: the table of contents, Retrieve's section-clipped window,
the half-open ReadSection, a budget stop, the turn limit and the decomposition record."""

import json

from rlm_docs.call_purpose import Purpose
from rlm_docs.corpus import Corpus, coordinates
from rlm_docs.engine.trajectory import load_trajectory
from rlm_docs.eval.decomposition import decompose
from rlm_docs.governor import Budget, Governor, Ledger
from rlm_docs.questions import Question
from rlm_docs.systems import SystemConfig, make_system
from rlm_docs.systems.deepread import LAST_TURN

REPORT = [
    "# Overview\n\nAcme makes tools.\n\nIt sells them worldwide.\n\n"
    "# Results\n\nSales grew.\n\nCosts fell.\n\nRevenue was $4.2 billion in 2022.\n\n"
    "# Outlook\n\nRevenue guidance is flat.\n\nMore plans follow.",
    "Second page of the outlook.\n\nThe end.",
]
CORPUS = Corpus.from_documents({"report": REPORT})
QUESTION = Question(
    id="q1", question="What was Acme revenue in 2022?", answer_variants=[["$4.2 billion"]]
)
ANSWER = json.dumps({"values": ["$4.2 billion"], "citations": [{"file": "report", "page": 1}]})


def _system(tmp_path, replies, budget=None, **options):
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(replies))
    (tmp_path / "logs").mkdir(exist_ok=True)
    config = SystemConfig(
        corpus=CORPUS,
        model=f"scripted:{script}",
        budget=budget or Budget(),
        log_dir=str(tmp_path / "logs"),
        options=options,
    )
    ledger = Ledger()
    return make_system("deepread", config), Governor(config.budget, ledger=ledger), ledger


def test_sections_hold_their_own_paragraphs_and_the_toc_counts_them(tmp_path):
    found = coordinates.sections(CORPUS, "report")
    assert [(s.id, s.title, len(s.paragraphs)) for s in found] == [
        ("s1", "Overview", 3),
        ("s2", "Results", 4),
        ("s3", "Outlook", 5),  # runs across the page break
    ]
    system, gov, _ = _system(tmp_path, [ANSWER])
    system.answer(QUESTION, gov)
    prompt = system.client.calls[0][0]["content"]
    assert system.client.purposes[0] == Purpose("root", "deepread", "deepread", QUESTION.question)
    assert "s2 Results — 4 paragraphs, " in prompt and "tokens, p. 1" in prompt
    assert "report (2 pages)" in prompt


def test_retrieve_window_stays_in_the_section_and_read_section_is_half_open(tmp_path):
    replies = ["RETRIEVE: revenue 2022", "READ_SECTION: report | s3 | 1 | 3", ANSWER]
    system, gov, ledger = _system(tmp_path, replies)
    p = system.answer(QUESTION, gov)
    assert (p.answer, p.steps, p.stop_reason) == (["$4.2 billion"], 3, "final")
    assert p.citations == [{"file": "report", "page": 1}]
    retrieved = system.client.calls[1][-1]["content"]
    # k = 2: the best hit is the last paragraph of Results; its window (1, 1) keeps to Results
    assert "[FILE: report | SECTION: s2 | PARAGRAPH: 3 | PAGE: 1 | SCORE: " in retrieved
    assert "[FILE: report | SECTION: s2 | PARAGRAPH: 2 | PAGE: 1 | WINDOW]" in retrieved
    assert "SECTION: s2 | PARAGRAPH: 4" not in retrieved  # past the section's end
    # the second hit opens Outlook: nothing before it is shown (Results is another section)
    assert "[FILE: report | SECTION: s3 | PARAGRAPH: 1 | PAGE: 1 | SCORE: " in retrieved
    assert "[FILE: report | SECTION: s3 | PARAGRAPH: 0 | PAGE: 1 | WINDOW]" in retrieved
    assert retrieved.count("[END PARAGRAPH]") == 5
    read = system.client.calls[2][-1]["content"]
    assert "paragraphs 1..2" in read and "PARAGRAPH: 1 |" in read and "PARAGRAPH: 2 |" in read
    assert "PARAGRAPH: 3 |" not in read and "PARAGRAPH: 0 |" not in read
    traj = load_trajectory(p.trajectory)
    hits = traj.iterations[0].extra["retrieve"]["hits"]
    assert [(h["section"], h["paragraph"], h["window"]) for h in hits] == [
        ("s2", 3, [2, 4]),
        ("s3", 1, [0, 3]),
    ]
    assert traj.iterations[1].extra["read_section"]["read"] == 2
    record = decompose(traj, [e.to_dict() for e in ledger.entries], CORPUS)
    assert record.strategies == ["search-first", "locate-then-read"]
    assert record.pages_looked == 1 and record.sub_calls == 0


def test_read_section_errors_are_shown_to_the_model(tmp_path):
    replies = ["READ_SECTION: report | s9 | 0 | 2", "READ_SECTION: report | s1 | 2", ANSWER]
    system, gov, _ = _system(tmp_path, replies)
    p = system.answer(QUESTION, gov)
    assert p.stop_reason == "final" and p.answer == ["$4.2 billion"]
    assert "has no section 's9'" in system.client.calls[1][-1]["content"]
    assert system.client.calls[2][-1]["content"].startswith("Error: READ_SECTION takes")


def test_window_flag_and_k_change_what_retrieve_shows(tmp_path):
    system, gov, _ = _system(tmp_path, ["RETRIEVE: revenue", ANSWER], k=1, window="0,0")
    system.answer(QUESTION, gov)
    retrieved = system.client.calls[1][-1]["content"]
    assert retrieved.count("[END PARAGRAPH]") == 1 and "WINDOW" not in retrieved


def test_a_step_budget_forces_the_answer(tmp_path):
    system, gov, ledger = _system(
        tmp_path, ["RETRIEVE: revenue", ANSWER], budget=Budget(max_steps=1)
    )
    p = system.answer(QUESTION, gov)
    assert (p.stop_reason, p.stop_axis, p.steps, p.answer) == (
        "forced",
        "steps",
        2,
        ["$4.2 billion"],
    )
    assert "root-step budget exhausted" in system.client.calls[1][-1]["content"]
    assert len(ledger.entries) == 2


def test_the_round_limit_forces_the_answer(tmp_path):
    system, gov, _ = _system(tmp_path, ["RETRIEVE: revenue", "RETRIEVE: more"], max_iterations=2)
    p = system.answer(QUESTION, gov)
    assert (p.stop_reason, p.stop_axis, p.steps, p.answer) == ("forced", "steps", 2, [])
    assert system.client.calls[1][-1]["content"] == LAST_TURN


def test_a_long_read_is_cut_and_says_where_to_read_on(tmp_path):
    replies = ["READ_SECTION: report | s3 | 0 | 9", ANSWER]
    system, gov, _ = _system(tmp_path, replies, max_read_chars=40)
    system.answer(QUESTION, gov)
    read = system.client.calls[1][-1]["content"]
    assert "paragraphs 0..1:" in read and "PARAGRAPH: 2 |" not in read
    assert read.endswith("(cut at the length limit: read on from paragraph 2)")
