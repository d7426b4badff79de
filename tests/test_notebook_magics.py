"""`%load_ext rlm_docs`: the magics in a real IPython `InteractiveShell`."""

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

from rlm_docs.corpus import Corpus
from rlm_docs.engine.prediction import Prediction
from rlm_docs.notebook import TrajectoryView

PAGES = {
    "3M_2018_10K": ["cover", "Capital expenditure was $1,577 million in 2018."],
    "AMD_2019_10K": ["AMD revenue was $6.73 billion in 2019."],
}


@pytest.fixture(scope="module")
def shell(tmp_path_factory):
    store = Corpus.from_documents(PAGES).save(tmp_path_factory.mktemp("c") / "store")
    sh = InteractiveShell.instance()
    sh.run_line_magic("load_ext", "rlm_docs")
    sh.run_line_magic("rlm_corpus", f"{store} --model offline")
    yield sh
    sh.magics_manager.registry["RlmMagics"].close()


def test_cell_magic_runs_in_the_sandbox_and_exports_variables(shell, capsys):
    shell.run_cell_magic(
        "rlm", "-o n -o top", "top = search('capital expenditure')[0]\nn = 7\nprint(top['file'])"
    )
    out = capsys.readouterr()
    assert out.out.strip() == "3M_2018_10K"
    assert shell.user_ns["n"] == 7 and shell.user_ns["top"]["page"] == 2
    assert shell.user_ns["_rlm"].error is None
    # state persists across cells; the notebook's own namespace is not the worker's
    shell.run_cell_magic("rlm", "", "print(n * 6)")
    assert capsys.readouterr().out.strip() == "42"
    shell.run_cell_magic("rlm", "", "import os")
    assert "not available in the sandbox" in capsys.readouterr().err
    with pytest.raises(UsageError, match="no such variable"):
        shell.run_cell_magic("rlm", "-o missing", "pass")


def test_llm_query_available_with_a_model(shell, capsys):
    shell.run_cell_magic(
        "rlm", "", "print(llm_query('Question: revenue?\\n' + page('AMD_2019_10K', 1)))"
    )
    assert "$6.73 billion" in capsys.readouterr().out


def test_line_magic_asks_and_keeps_the_prediction(shell, capsys):
    shell.run_line_magic("rlm_ask", "--max-steps 4 What was 3M's capital expenditure in 2018?")
    shown = capsys.readouterr().out  # the terminal shell displays the plain-text fallback
    assert "Citations: 3M_2018_10K p.2" in shown
    assert "[3M_2018_10K p.2] Capital expenditure was $1,577 million" in shown
    pred = shell.user_ns["_rlm_prediction"]
    assert isinstance(pred, Prediction)
    assert pred.question == "What was 3M's capital expenditure in 2018?"
    assert any("1,577" in a for a in pred.answer)
    assert {"file": "3M_2018_10K", "page": 2} in pred.citations
    assert isinstance(shell.user_ns["_rlm_trajectory"], TrajectoryView)


def test_user_mistakes_are_usage_errors(shell, tmp_path, capsys):
    with pytest.raises(UsageError, match="nowhere"):
        shell.run_line_magic("rlm_corpus", str(tmp_path / "nowhere"))
    with pytest.raises(UsageError, match="--max-steps: must be >= 1, got 0"):
        shell.run_line_magic("rlm_ask", "--max-steps 0 anything?")
    # the failed %rlm_corpus kept the previous session
    shell.run_cell_magic("rlm", "", "print(len(files()))")
    assert capsys.readouterr().out.strip() == "2"


def test_cell_magic_defaults_to_the_demo_corpus(tmp_path, monkeypatch, capsys):
    from rlm_docs.ingest.demo import demo_corpus_path
    from rlm_docs.notebook.magics import RlmMagics

    monkeypatch.setenv("RLM_DOCS_HOME", str(tmp_path))
    magics = RlmMagics(InteractiveShell.instance())
    try:
        magics.rlm("", "print(sorted(f['name'] for f in files()))")
        assert magics.session.corpus.path == demo_corpus_path()
        names = Corpus.load(demo_corpus_path()).names
        assert capsys.readouterr().out.strip() == str(sorted(names))
    finally:
        magics.close()
