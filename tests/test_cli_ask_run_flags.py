"""`rlm-docs ask --anytime SHARES --memory DIR`: the same flags (declared once, as options of the
`rlm` system) that `eval` takes, with the answers at each share and the memory's reuse shown."""

import json
from pathlib import Path

import pytest

from rlm_docs.cli import main
from tests.fixtures.engine import repl, saved_store

DOCS = {"window": ["1: great service\n2: awful food", "3: fine place"]}
LINES = ["great service", "awful food", "fine place"]
CLASSIFY = repl(f"labels = [llm_query(f'Label: {{x}}') for x in {LINES!r}]\nprint(labels)")
ANSWER = '{"answer": ["2"], "citations": [{"file": "window", "page": 1}]}'


@pytest.fixture
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return saved_store(tmp_path_factory, DOCS)


def _scripted(path: Path, replies: list[str]) -> str:
    path.write_text(json.dumps(replies), encoding="utf-8")
    return f"scripted:{path}"


def _ask(store: Path, tmp_path: Path, root: list[str], *extra: str) -> list[str]:
    return [
        "ask",
        "How many lines are not negative?",
        "--corpus",
        str(store),
        "--model",
        _scripted(tmp_path / "root.json", root),
        "--log-dir",
        str(tmp_path / "runs"),
        *extra,
    ]


def test_ask_anytime_records_and_prints_the_answer_at_each_share(store, tmp_path, capsys):
    root = [repl("x = 1"), "FINAL(1 -- window page 1)", f"FINAL({ANSWER})"]
    assert main(_ask(store, tmp_path, root, "--max-steps", "4", "--anytime", "0.25")) == 0
    out = capsys.readouterr().out
    assert "Answer: 2" in out and "at 25% of the budget: 1" in out
    assert main(_ask(store, tmp_path, root, "--max-steps", "4", "--anytime", "0.25", "--json")) == 0
    [checkpoint] = json.loads(capsys.readouterr().out)["anytime"]
    assert (checkpoint["shares"], checkpoint["answer"]) == ([0.25], ["1"])


def test_ask_memory_reuses_a_later_questions_identical_sub_calls(store, tmp_path, capsys):
    memory = ["--memory", str(tmp_path / "memory")]
    sub = ["--sub-model", _scripted(tmp_path / "sub.json", ["positive", "negative", "neutral"])]
    root = [CLASSIFY, f"FINAL({ANSWER})"]
    assert main(_ask(store, tmp_path, root, *sub, *memory)) == 0
    first = capsys.readouterr().out
    assert "memory: question 1 of this corpus, 0 sub-calls reused" in first
    assert "3 sub-calls" in first
    assert main(_ask(store, tmp_path, root, *sub, *memory, "--json")) == 0
    second = json.loads(capsys.readouterr().out)
    assert second["sub_calls"] == 0  # every sub-prompt was answered by the memory
    assert second["info"]["memory"]["reused_sub_calls"] == 3


@pytest.mark.parametrize("shares", ["0", "half"])
def test_ask_refuses_a_bad_share_in_one_line(store, tmp_path, capsys, shares):
    assert main(_ask(store, tmp_path, ["FINAL(x)"], "--anytime", shares)) == 2
    err = capsys.readouterr().err
    assert "--anytime" in err and "Traceback" not in err
