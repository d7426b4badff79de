from rlm_docs.corpus import Corpus
from rlm_docs.eval.dataset import load_questions
from rlm_docs.governor import Budget, Governor, Ledger
from rlm_docs.systems import SystemConfig, make_system
from tests.fixtures.eval.support import DOCS, QUESTIONS


def test_rlm_adapter_uses_the_run_budget_ledger_and_log_dir(tmp_path):
    ledger = Ledger()
    config = SystemConfig(
        corpus=Corpus.from_documents(DOCS),
        model="offline",
        budget=Budget(max_steps=6),
        log_dir=str(tmp_path),
        ledger=ledger,
    )
    system = make_system("rlm", config)
    question = load_questions(QUESTIONS)[4]
    p = system.answer(question, Governor(config.budget, ledger=Ledger(), question_id=question.id))
    assert p.question_id == "q5" and p.stop_reason in ("final", "forced")
    assert 1 <= p.steps <= 6
    entries = [e for e in ledger.entries if e.question_id == "q5"]
    assert entries and p.input_tokens == sum(e.input_tokens for e in entries)
    assert p.trajectory and p.trajectory.startswith(str(tmp_path))
    assert {"file": "globex_2021_10k", "page": 3} in p.citations
