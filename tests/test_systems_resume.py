"""`eval --resume` with the document agents: a run cut after some questions finishes the rest
and keeps the rows it had; a run with other options is refused."""

import json

import pytest

from rlm_docs.cli import main
from tests.fixtures.eval.support import QUESTIONS, build_store


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return build_store(tmp_path_factory.mktemp("resume") / "store")


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("RLM_DOCS_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("RLM_DOCS_CACHE", "off")
    return tmp_path


def _eval(store, out, system, *extra):
    args = ["eval", "--dataset", str(QUESTIONS), "--corpus", str(store), "--model", "offline"]
    return main([*args, "--system", system, "--out", str(out), "--no-progress", *extra])


@pytest.mark.parametrize("system", ["deepread", "docdancer", "sleuth"])
def test_a_cut_run_resumes_where_it_stopped(env, store, system, capsys):
    out = env / system
    assert _eval(store, out, system) == 0
    results = out / "results.jsonl"
    rows = results.read_text().splitlines(keepends=True)
    assert len(rows) == 6
    results.write_text("".join(rows[:3]))  # as if the run had been stopped after three
    capsys.readouterr()
    assert _eval(store, out, system, "--resume") == 0
    assert f"{system}: 6 questions (3 run now)" in capsys.readouterr().out
    again = results.read_text().splitlines(keepends=True)
    assert again[:3] == rows[:3] and len(again) == 6
    by_id = {json.loads(r)["id"]: json.loads(r) for r in rows}
    for line in again[3:]:  # the questions run again answer as they did
        row = json.loads(line)
        assert row["answer"] == by_id[row["id"]]["answer"]
    flag = {"deepread": "--retrieve-k", "docdancer": "--search-hits", "sleuth": "--top-k"}[system]
    assert _eval(store, out, system, "--resume", flag, "3") == 2
    assert "cannot resume, settings differ" in capsys.readouterr().err
