from rlm_docs.corpus import Corpus
from rlm_docs.eval.dataset import load_questions
from rlm_docs.governor import Budget, Governor, Ledger
from rlm_docs.systems import SystemConfig, make_system
from tests.fixtures.eval.support import DOCS, QUESTIONS


def _system(tmp_path):
    config = SystemConfig(
        corpus=Corpus.from_documents(DOCS),
        model="offline",
        budget=Budget(max_steps=6),
        log_dir=str(tmp_path),
        ledger=Ledger(),
    )
    return config, make_system("rlm", config)


def test_rlm_system_answers_under_the_governor_it_is_given(tmp_path):
    config, system = _system(tmp_path)
    question = load_questions(QUESTIONS)[4]
    ledger = Ledger()
    p = system.answer(question, Governor(config.budget, ledger=ledger, question_id=question.id))
    assert p.question_id == "q5" and p.stop_reason == "final" and p.sub_calls == 1
    assert p.answer == ["12,500"] and {"file": "globex_2021_10k", "page": 3} in p.citations
    entries = [e for e in ledger.entries if e.question_id == "q5"]
    assert len(entries) == p.steps + p.sub_calls  # every call recorded in the governor's ledger
    assert p.input_tokens == sum(e.input_tokens for e in entries)
    assert not config.ledger.entries  # nothing went around it
    assert p.trajectory and p.trajectory.startswith(str(tmp_path))


def test_rlm_system_stops_at_the_given_governors_limits_not_its_configured_budget(tmp_path):
    config, system = _system(tmp_path)  # configured: 100 sub-calls allowed
    question = load_questions(QUESTIONS)[4]
    governor = Governor(Budget(max_sub_calls=0), ledger=Ledger(), question_id=question.id)
    p = system.answer(question, governor)
    assert p.sub_calls == 0 and governor.totals()["sub_calls"] == 0
    assert p.stop_reason == "forced"  # the refused sub-call ended the run early
    assert p.steps == governor.totals()["root_calls"] == 1
