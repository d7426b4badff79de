"""`Session`: the model's sandbox driven by hand (real sandbox worker, offline model)."""

import pytest

from rlm_docs.corpus import Corpus
from rlm_docs.errors import ConfigError, CorpusError
from rlm_docs.governor import Budget
from rlm_docs.notebook import Session, TrajectoryView

PAGES = {
    "3M_2018_10K": [
        "3M annual report cover",
        "Capital expenditure was $1,577 million in 2018, up from $1,373 million.",
        "Net sales were $32,765 million.",
    ],
    "AMD_2019_10K": ["AMD revenue was $6.73 billion in 2019.", "Risk factors"],
}


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return Corpus.from_documents(PAGES).save(tmp_path_factory.mktemp("c") / "store")


def test_helpers_run_in_the_sandbox_and_state_persists(store):
    with Session(store) as s:
        r = s.run("hits = search('capital expenditure')\nprint(hits[0])")
        assert r.error is None
        assert "3M_2018_10K" in r.stdout and "'page': 2" in r.stdout
        assert s.run("print(page('3M_2018_10K', 3))").stdout.strip() == PAGES["3M_2018_10K"][2]
        s.set("n", 41)
        assert s.run("n += 1").error is None
        assert s.get("n") == 42
        assert "n" in s.variables() and "hits" in s.variables()
        assert [code for code, _ in s.history][0].startswith("hits = search")
        with pytest.raises(KeyError):
            s.get("undefined_name")


def test_it_is_the_confined_sandbox(store):
    with Session(Corpus.load(store)) as s:
        assert "ZeroDivisionError" in s.run("1/0").error
        assert "not available in the sandbox" in s.run("import os").error
        assert "NameError" in s.run("open('/etc/passwd')").error


def test_in_memory_corpus_is_stored_for_the_worker_and_cleaned_up():
    s = Session(Corpus.from_documents(PAGES))
    try:
        assert "Net sales" in s.run("print(page('3M_2018_10K', 3))").stdout
        tmp = s.store_path()
        assert tmp is not None and tmp.is_dir()
    finally:
        s.close()
    assert not tmp.exists()


def test_model_functions_go_through_the_governor(store):
    with Session(store, model="offline", budget=Budget(max_sub_calls=1)) as s:
        r = s.run(
            "a = llm_query('Question: capital expenditure?\\n' + page('3M_2018_10K', 2))\nprint(a)"
        )
        assert r.error is None and "$1,577 million" in r.stdout
        assert [e.role for e in s.ledger.entries] == ["sub"]
        refused = s.run("llm_query('again')")
        assert "BudgetExceeded" in refused.error
        caught = s.run("try:\n    llm_query('x')\nexcept BudgetExceeded:\n    print('caught')")
        assert caught.stdout.strip() == "caught"
        assert s.run("print(cite('3M_2018_10K', 2))").stdout.strip() == "cited 3M_2018_10K p.2"


def test_custom_functions_and_bare_session():
    with Session(functions={"double": lambda x: 2 * x}) as s:
        assert s.run("print(double(21))").stdout.strip() == "42"
        assert "NameError" in s.run("search('x')").error
        with pytest.raises(ConfigError, match="no corpus"):
            s.ask("anything?")
        with pytest.raises(ConfigError, match="code must be a str"):
            s.run(42)


def test_close_restarts_with_a_fresh_worker(store):
    s = Session(store)
    s.run("x = 1")
    s.close()
    assert "NameError" in s.run("print(x)").error
    s.close()


def test_relative_store_path(store, monkeypatch):
    monkeypatch.chdir(store.parent)
    with Session(store.name) as s:
        assert "Net sales" in s.run("print(page('3M_2018_10K', 3))").stdout


def test_bad_corpus_path_names_it(tmp_path):
    with pytest.raises(CorpusError, match="nowhere"):
        Session(tmp_path / "nowhere")


def test_ask_returns_cited_prediction_and_trajectory(store):
    with Session(store, model="offline") as s:
        p = s.ask("What was 3M's capital expenditure in 2018?", budget=Budget(max_steps=4))
        assert any("1,577" in a for a in p.answer)
        assert {"file": "3M_2018_10K", "page": 2} in p.citations
        view = s.last_trajectory
        assert isinstance(view, TrajectoryView)
        assert view.iterations and view.code
        assert len(s.ledger) == len(view.ledger_rows()) + sum(
            1 for e in s.ledger.entries if e.role == "extract"
        )


def test_ask_writes_the_trajectory_file_it_names(rlm_home, store, tmp_path):
    """docs/guide/notebooks.md: `TrajectoryView.from_file(p.trajectory)` after `Session.ask` (it used to be None)."""
    with Session(store, model="offline") as s:
        p = s.ask("What were 3M's net sales?", budget=Budget(max_steps=4))
        q = s.ask("What was AMD revenue in 2019?", log_dir=tmp_path / "logs")
    view = TrajectoryView.from_file(p.trajectory)
    assert p.trajectory.startswith(str(tmp_path / "home" / "runs"))
    assert view.iterations and view.result.answer == p.answer
    assert TrajectoryView.from_file(q.trajectory).result.question == q.question
    assert q.trajectory.startswith(str(tmp_path / "logs"))


def test_demo_names_the_bundled_store_as_on_the_command_line(rlm_home, tmp_path, monkeypatch):
    from rlm_docs import RLM

    monkeypatch.chdir(tmp_path)  # no directory called demo here
    with Session("demo") as s:
        assert "3M_2018_10K" in s.corpus.names
        assert "3M_2018_10K" in s.run("print(search('capital spending')[0])").stdout
    assert RLM(corpus="demo").corpus.names == s.corpus.names
