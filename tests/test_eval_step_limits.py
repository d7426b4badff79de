"""`eval --max-steps 1,2,4`: the exact accuracy-vs-step-limit curve. A loopback model that
reads for two turns and answers on the third (forced earlier, it answers only once it has read
twice) gives each limit a known outcome; the response cache must make the longest run's
prefixes free, so the server sees exactly the longest run's calls plus one forced answer per
question at each shorter limit."""

import json
import re

import pytest

from rlm_docs.cli import main
from rlm_docs.eval.report import build_report
from rlm_docs.eval.rundir import load_run
from rlm_docs.viewer import load_source
from tests.fixtures.engine import repl
from tests.fixtures.eval.support import ANSWERS, QUESTIONS, build_store
from tests.servers.chat import ChatServer

N_QUESTIONS = 6
READING_TURNS = 2  # turns before the model answers (the run's third step finishes it)


def reads_then_answers(messages: list[dict]) -> str:
    """Two reading turns, then the answer; a forced answer is right only after both."""
    text = "\n".join(str(m["content"]) for m in messages)
    question = re.search(r"^Question: (.+)$", text, re.M).group(1)
    answer, page = ANSWERS.get(question, (["Not found in the documents"], None))
    cites = [{"file": page[0], "page": page[1]}] if page else []
    payload = json.dumps({"answer": answer, "citations": cites})
    turns = sum(m["role"] == "assistant" for m in messages)
    if "No more code will be run" in str(messages[-1]["content"]):
        guess = json.dumps({"answer": ["no idea yet"], "citations": []})
        return f"FINAL({payload if turns >= READING_TURNS else guess})"
    if turns < READING_TURNS:
        return repl(f"x = {turns + 1}")
    return repl(f"answer['content'] = {payload!r}\nanswer['ready'] = True")


@pytest.fixture
def env(rlm_home, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-000000000000000000")
    monkeypatch.setenv("RLM_DOCS_CACHE", str(tmp_path / "cache.sqlite"))
    build_store(tmp_path / "store")
    with ChatServer(reply=reads_then_answers) as server:
        yield tmp_path, server


def _eval(tmp_path, server, out, steps, *extra) -> int:
    return main(
        ["eval", "--dataset", str(QUESTIONS), "--corpus", str(tmp_path / "store"),
         "--system", "rlm", "--model", f"openai:fake@{server.base_url}", "--out", str(out),
         "--no-progress", "--max-steps", steps, *extra]
    )  # fmt: skip


def _accuracy(run) -> float:
    _, rows = load_run(run)
    return sum(float(r["score"]) for r in rows) / len(rows)


def test_exact_curve_equals_separate_runs_and_only_forced_answers_are_new(env, capsys):
    tmp_path, server = env
    assert _eval(tmp_path, server, tmp_path / "sweep", "4,1,2") == 0
    printed = capsys.readouterr().out
    # the longest limit: 3 calls a question, all new; each shorter limit: its prefix replayed,
    # one new call (the forced answer) a question
    assert len(server.requests) == 3 * N_QUESTIONS + 2 * N_QUESTIONS
    assert f"{3 * N_QUESTIONS} new calls for the longest limit, {2 * N_QUESTIONS} extra" in printed
    assert (
        f"steps <= 1: {N_QUESTIONS} questions ({N_QUESTIONS} run now), accuracy 0.0% "
        f"[0.0%, 0.0%], {N_QUESTIONS} new calls in all"
    ) in printed
    manifest = json.loads((tmp_path / "sweep" / "steps-2" / "run.json").read_text())
    assert manifest["budget"]["max_steps"] == 4 and manifest["step_limit"] == 2
    exact = {s: _accuracy(tmp_path / "sweep" / f"steps-{s}") for s in (1, 2, 4)}
    assert exact[1] == 0.0 and exact[2] == exact[4] > 0  # forced after two reads: right
    for s in (1, 2):  # a separate run told the limit scores the same
        assert _eval(tmp_path, server, tmp_path / f"alone-{s}", str(s)) == 0
        assert _accuracy(tmp_path / f"alone-{s}") == exact[s]
    # the report: the exact curve beside the lower bound, and what the curve cost
    report = build_report([tmp_path / "sweep"], tmp_path / "rep")
    assert report["runs"][0].manifest["budget"]["max_steps"] == 4
    md = (tmp_path / "rep" / "report.md").read_text()
    table = md.split("## Exact accuracy vs step limit")[1].split("\n\n")[1].splitlines()
    assert [r.split(" | ")[1:2] + r.split(" | ")[3:5] for r in table[2:5]] == [
        ["1", "0.0%", "6"],
        ["2", "0.0%", "6"],  # the lower bound: nothing finished within 2 steps
        ["4", f"{exact[4]:.1%}", "18"],
    ]
    assert table[5].split(" | ")[1:] == [
        "extra for the shorter limits",
        "",
        "",
        "12",
        "",
        "0.0000 |",
    ]


def test_resume_replays_nothing_and_refuses_other_limits(env, capsys):
    tmp_path, server = env
    assert _eval(tmp_path, server, tmp_path / "sweep", "1,2") == 0
    before = len(server.requests)
    capsys.readouterr()
    assert _eval(tmp_path, server, tmp_path / "sweep", "1,2", "--resume") == 0
    assert len(server.requests) == before
    printed = capsys.readouterr().out  # the totals stand, and nothing ran now
    assert f"steps <= 2: {N_QUESTIONS} questions (0 run now)" in printed
    # the viewer opens the curve's directory as its longest limit's run
    shown = load_source(tmp_path / "sweep")
    assert shown["title"] == "steps-2" and shown["summary"]["questions"] == N_QUESTIONS
    assert _eval(tmp_path, server, tmp_path / "sweep", "1,2,4", "--resume") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"rlm-docs eval: error: {tmp_path / 'sweep'}: cannot resume, step limits differ from "
        "the original run (1,2 != 1,2,4)"
    ]


@pytest.mark.parametrize("bad", ["0,2", "a", "2,", "-1"])
def test_bad_step_lists_are_one_line_and_exit_2(bad, tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        main(
            ["eval", "--dataset", str(QUESTIONS), "--corpus", "demo", "--system", "rlm",
             "--model", "offline", "--out", str(tmp_path / "o"), f"--max-steps={bad}"]
        )  # fmt: skip
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "rlm-docs eval: error: argument --max-steps: expected an integer >= 1 or a comma list "
        f"of them (e.g. 1,2,4,8,16), got {bad!r}"
    ]
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("manifest", "complaint"),
    [
        ([4, 2], "not an rlm-docs step-limit manifest"),
        ({"limits": [4, 2]}, "not an rlm-docs step-limit manifest"),
        (
            {"format": "rlm-docs.step-limits", "limits": ["x"]},
            "field 'limits' must be a non-empty list of integers >= 1",
        ),
        (
            {"format": "rlm-docs.step-limits", "limits": []},
            "field 'limits' must be a non-empty list of integers >= 1",
        ),
    ],
)
def test_a_bad_step_limit_manifest_is_one_line_and_exit_2(manifest, complaint, tmp_path, capsys):
    path = tmp_path / "sweep" / "step_limits.json"
    path.parent.mkdir()
    path.write_text(json.dumps(manifest), encoding="utf-8")
    assert main(["report", str(path.parent), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"rlm-docs report: error: {path}: {complaint}"]
    assert not (tmp_path / "out").exists()


def test_a_limit_given_twice_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        main(
            ["eval", "--dataset", str(QUESTIONS), "--corpus", "demo", "--system", "rlm",
             "--model", "offline", "--out", str(tmp_path / "o"), "--max-steps=2,4,2"]
        )  # fmt: skip
    assert stop.value.code == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "rlm-docs eval: error: argument --max-steps: a step limit appears twice in '2,4,2'"
    ]
    assert not (tmp_path / "o").exists()


def test_stop_at_step_cuts_the_run_while_notices_show_max_steps():
    from rlm_docs.errors import ConfigError
    from rlm_docs.governor import Budget, BudgetExceeded, Governor, Ledger

    gov = Governor(Budget(max_steps=4, stop_at_step=2, soft_fraction=0.25), ledger=Ledger())
    gov.step()
    assert gov.steps_left() == 1 and gov.exhausted() is None
    assert "(1/4)" in gov.notice() and "3 root steps left" in gov.notice()  # as the 4-step run
    gov.step()
    assert gov.exhausted() == "steps" and gov.steps_left() == 0
    with pytest.raises(BudgetExceeded):
        gov.step()
    with pytest.raises(ConfigError, match="stop_at_step: must be >= 1"):
        Budget(stop_at_step=0)
