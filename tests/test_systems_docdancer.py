"""`docdancer` with scripted models: full-text search with its total hit count, the reader
sub-call carrying the goal, a refused reader, a budget stop and the decomposition record."""

import json

from rlm_docs.corpus import Corpus
from rlm_docs.engine.trajectory import load_trajectory
from rlm_docs.eval.decomposition import decompose
from rlm_docs.governor import Budget, Governor, Ledger
from rlm_docs.models import ScriptedClient
from rlm_docs.questions import Question
from rlm_docs.systems import SystemConfig, make_system

REPORT = [
    "# Overview\n\nAcme makes tools.\n\nRevenue is reported below.\n\n"
    "# Results\n\nRevenue was $4.2 billion in 2022.\n\nNet revenue grew 8%.",
    "# Outlook\n\nRevenue guidance is flat.\n\nMore plans follow.",
]
OTHER = ["Globex sells appliances.", "Globex revenue fell."]
CORPUS = Corpus.from_documents({"report": REPORT, "globex": OTHER})
QUESTION = Question(id="q1", question="What was Acme revenue in 2022?", answer_variants=[["x"]])
ANSWER = json.dumps({"values": ["$4.2 billion"], "citations": [{"file": "report", "page": 1}]})
REPORT_REPLY = (
    "Evidence in document: Revenue was $4.2 billion (report, page 1)\nSummary: $4.2 billion"
)


def _system(tmp_path, root, sub=(), budget=None, **options):
    (tmp_path / "logs").mkdir(exist_ok=True)
    config = SystemConfig(
        corpus=CORPUS,
        model="offline",
        budget=budget or Budget(),
        log_dir=str(tmp_path / "logs"),
        options=options,
    )
    system = make_system("docdancer", config)
    system.client, system.sub_client = ScriptedClient(list(root)), ScriptedClient(list(sub))
    ledger = Ledger()
    return system, Governor(config.budget, ledger=ledger), ledger


def test_search_reports_every_hit_and_shows_the_first_ones(tmp_path):
    root = ["SEARCH: revenue | 2022", ANSWER]
    system, gov, _ = _system(tmp_path, root, toc_docs=2, hits=2)
    p = system.answer(QUESTION, gov)
    assert p.stop_reason == "final" and p.answer == ["$4.2 billion"]
    shown = system.client.calls[1][-1]["content"]
    # five paragraphs say "revenue" (one also says 2022): all counted, two shown, best first
    assert shown.splitlines()[0] == "5 hits for revenue | 2022 (showing the first 2):"
    lines = shown.splitlines()[1:]
    assert len(lines) == 2
    assert lines[0].startswith("- section report#s2 | page 1 | ") and "$4.2 billion" in lines[0]
    traj = load_trajectory(p.trajectory)
    assert traj.iterations[0].extra["docdancer_search"]["total"] == 5


def test_read_sends_the_sections_and_the_goal_to_the_reader(tmp_path):
    root = ["SEARCH: revenue", "READ: report#s2, report#s3 | Acme revenue for 2022", ANSWER]
    system, gov, ledger = _system(tmp_path, root, sub=[REPORT_REPLY])
    p = system.answer(QUESTION, gov)
    assert (p.answer, p.steps, p.sub_calls) == (["$4.2 billion"], 3, 1)
    prompt = system.sub_client.calls[0][0]["content"]
    assert system.sub_client.purposes[0].prompt == "docdancer-read"
    assert "Goal: Acme revenue for 2022" in prompt
    assert "Evidence in document:" in prompt and "Summary:" in prompt
    assert "[FILE: report | PAGE: 1]" in prompt and "Revenue was $4.2 billion" in prompt
    assert "[FILE: report | PAGE: 2]" in prompt and "Revenue guidance is flat." in prompt
    assert "Acme makes tools." not in prompt  # the Overview section was not asked for
    assert system.client.calls[2][-1]["content"].endswith(REPORT_REPLY)
    assert [e.role for e in ledger.entries] == ["root", "root", "sub", "root"]
    traj = load_trajectory(p.trajectory)
    call = traj.iterations[1].code_blocks[0].result.sub_calls[0]
    assert call.response == REPORT_REPLY
    record = decompose(traj, [e.to_dict() for e in ledger.entries], CORPUS)
    assert record.strategies == ["search-first", "search-then-read"]
    assert record.sub_calls == 1 and record.pages_looked == 3  # hits and reads


def test_a_refused_reader_is_told_to_the_agent_and_a_step_budget_forces_the_answer(tmp_path):
    root = ["READ: report#s2 | revenue", ANSWER]
    system, gov, _ = _system(tmp_path, root, budget=Budget(max_sub_calls=0, max_steps=1))
    p = system.answer(QUESTION, gov)
    assert system.sub_client.calls == []
    refused = system.client.calls[1]
    assert "the budget refused the reader" in refused[-2]["content"]
    assert "root-step budget exhausted" in refused[-1]["content"]
    assert (p.stop_reason, p.stop_axis, p.answer) == ("forced", "steps", ["$4.2 billion"])


def test_bad_requests_are_errors_shown_to_the_agent(tmp_path):
    many = " | ".join(f"w{i}" for i in range(21))
    root = ["READ: s2 | revenue", "READ: report#s9 | revenue", f"SEARCH: {many}", ANSWER]
    system, gov, _ = _system(tmp_path, root)
    p = system.answer(QUESTION, gov)
    assert p.stop_reason == "final"
    assert "expected document#section" in system.client.calls[1][-1]["content"]
    assert "has no section 's9'" in system.client.calls[2][-1]["content"]
    assert system.client.calls[3][-1]["content"].startswith("Error: SEARCH takes 1 to 20")
