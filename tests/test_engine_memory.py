"""Corpus memory across questions (`RLM(memory=DIR)`): a sub-call whose model and exact prompt
were answered for an earlier question is answered from the memory without a model call; notes
the model keeps with `note` reach later questions over the same corpus, never another corpus;
with the memory off a run sends exactly what it sent before."""

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from rlm_docs.engine import RLM
from rlm_docs.engine.memory import Memory
from rlm_docs.models import ScriptedClient
from tests.fixtures.engine import repl, saved_store
from tests.fixtures.eval.support import QUESTIONS, build_store

# A window of labelled lines, as OOLONG asks about: each question classifies every line.
DOCS = {"window": ["1: great service\n2: awful food\n3: fine place", "4: loved it"]}
OTHER = {"elsewhere": ["nothing to see"]}
LINES = ["great service", "awful food", "fine place", "loved it"]
CLASSIFY = repl(
    "labels = llm_query_batched([f'Label the sentiment of: {line}' for line in "
    f"{LINES!r}])\nprint(labels)"
)
SEQUENTIAL = repl(f"labels = [llm_query(f'Label: {{x}}') for x in {LINES!r}]\nprint(labels)")
ANSWER = '{"answer": ["3"], "citations": [{"file": "window", "page": 1}]}'


class Recording(ScriptedClient):
    """A scripted client that keeps the messages of every call it answered."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.seen: list[list[dict]] = []
        self._seen_lock = threading.Lock()

    def complete(self, messages, **kwargs):
        with self._seen_lock:
            self.seen.append(json.loads(json.dumps(messages)))
        return super().complete(messages, **kwargs)


@pytest.fixture
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return saved_store(tmp_path_factory, DOCS)


def test_a_second_question_reuses_identical_sub_calls_without_a_model_call(store, tmp_path):
    sub = Recording(["positive", "negative", "neutral", "positive"], model="sub")
    root = Recording([CLASSIFY, f"FINAL({ANSWER})", CLASSIFY, f"FINAL({ANSWER})"])
    rlm = RLM(store, model=root, sub_model=sub, memory=tmp_path / "memory")
    first = rlm.ask("How many lines are positive or neutral?", question_id="q1")
    labels = rlm.last_trajectory.iterations[0].code_blocks[0].result.stdout
    second = rlm.ask("How many lines are not negative?", question_id="q2")
    calls = rlm.ledger.entries
    assert [e.role for e in calls if e.question_id == "q1"].count("sub") == 4
    assert [e.role for e in calls if e.question_id == "q2"].count("sub") == 0
    assert len(sub.seen) == 4  # the sub-model answered the first question only
    assert first.sub_calls == 4 and second.sub_calls == 0  # reuse is not spend
    assert first.info["memory"]["reused_sub_calls"] == 0
    assert second.info["memory"] | {"corpus": None} == {
        "corpus": None,
        "sequence": 2,
        "notes_before": 0,
        "reused_sub_calls": 4,
        "notes_written": 0,
    }
    cell = rlm.last_trajectory.iterations[0].code_blocks[0].result
    assert cell.stdout == labels  # each prompt gets the reply it got the first time
    assert all(c.extra == {"reused": True} for c in cell.sub_calls)


def test_notes_reach_later_questions_with_their_provenance(store, tmp_path):
    write = repl("print(note('Line 2 is the only negative one.', [['window', 1]]))")
    read = repl("print(notes('negative'), notes('absent word'))")
    root = Recording([write, f"FINAL({ANSWER})", read, f"FINAL({ANSWER})"])
    rlm = RLM(store, model=root, memory=tmp_path / "memory")
    rlm.ask("Which line is negative?", question_id="q1")
    pred = rlm.ask("How many negative lines?", question_id="q2")
    first_turn = root.seen[2][1]["content"]
    assert "1 notes from earlier questions" in first_turn
    stdout = rlm.last_trajectory.iterations[0].code_blocks[0].result.stdout
    kept = {
        "id": 1,
        "text": "Line 2 is the only negative one.",
        "pages": [{"file": "window", "page": 1}],
        "question_id": "q1",
        "question": "Which line is negative?",
    }
    assert stdout.strip() == f"{[kept]} []"
    assert pred.info["memory"]["notes_before"] == 1


def test_notes_never_cross_corpora(store, tmp_path, tmp_path_factory):
    write = repl("note('A finding.', [['window', 2]])")
    RLM(store, model=Recording([write, f"FINAL({ANSWER})"]), memory=tmp_path / "m").ask("Q?")
    other = saved_store(tmp_path_factory, OTHER)
    root = Recording([repl("print(notes())"), "FINAL(none)", '{"answer": ["none"]}'])
    rlm = RLM(other, model=root, memory=tmp_path / "m")
    rlm.ask("Anything?")
    assert "0 notes from earlier questions" in root.seen[0][1]["content"]
    assert rlm.last_trajectory.iterations[0].code_blocks[0].result.stdout.strip() == "[]"
    assert Memory(tmp_path / "m", store).fingerprint != Memory(tmp_path / "m", other).fingerprint


def test_a_note_on_a_page_that_does_not_exist_is_refused(store, tmp_path):
    root = Recording([repl("note('x', [['window', 9]])"), f"FINAL({ANSWER})"])
    rlm = RLM(store, model=root, memory=tmp_path / "m")
    rlm.ask("Q?")
    cell = rlm.last_trajectory.iterations[0].code_blocks[0].result
    assert "window has pages 1..2, not 9" in cell.stderr
    assert Memory(tmp_path / "m", store).notes() == []


def test_memory_off_sends_exactly_what_it_sent_before(store, tmp_path):
    def run(**kwargs) -> list:
        sub = Recording(["positive", "negative", "neutral", "positive"], model="sub")
        root = Recording([SEQUENTIAL, repl("print(notes())"), f"FINAL({ANSWER})"])
        pred = RLM(store, model=root, sub_model=sub, **kwargs).ask("How many?")
        return [root.seen, sub.seen, pred.answer, pred.sub_calls, pred.info]

    plain, off = run(), run(memory=None)
    assert plain == off
    assert "memory" not in plain[4] and "notes from earlier" not in json.dumps(plain[0])
    assert "NameError: name 'notes' is not defined" in json.dumps(plain[0])


def test_concurrent_writers_share_one_memory(store, tmp_path):
    memory = Memory(tmp_path / "m", store)
    threads = [
        threading.Thread(target=lambda i=i: memory.keep("m", f"p{i % 5}", f"r{i}", None))
        for i in range(40)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(memory.reply("m", f"p{i}") is not None for i in range(5)) == [True] * 5
    assert [memory.begin(None, "q") for _ in range(3)] == [1, 2, 3]


def _eval(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    root = [CLASSIFY, f"FINAL({ANSWER})"] * 2
    (tmp_path / "root.json").write_text(json.dumps(root))
    (tmp_path / "sub.json").write_text(json.dumps(["positive", "negative", "neutral", "fine"]))
    argv = [
        *("eval", "--dataset", str(QUESTIONS), "--corpus", str(build_store(tmp_path / "s"))),
        *("--system", "rlm", "--model", f"scripted:{tmp_path / 'root.json'}"),
        *("--sub-model", f"scripted:{tmp_path / 'sub.json'}", "--limit", "2"),
        *("--workers", "1", "--no-progress", "--out", str(tmp_path / "run"), *extra),
    ]
    return subprocess.run(
        [sys.executable, "-m", "rlm_docs", *argv],
        cwd=Path(__file__).resolve().parent.parent,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_eval_with_memory_reports_the_first_and_the_marginal_cost(tmp_path):
    done = _eval(tmp_path, "--memory", str(tmp_path / "memory"))
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").open()]
    by_order = sorted(rows, key=lambda r: r["info"]["memory"]["sequence"])
    assert [r["sub_calls"] for r in by_order] == [4, 0]
    assert [r["info"]["memory"]["reused_sub_calls"] for r in by_order] == [0, 4]
    first_tokens = by_order[0]["input_tokens"] + by_order[0]["output_tokens"]
    later_tokens = by_order[1]["input_tokens"] + by_order[1]["output_tokens"]
    line = f"memory: first question {first_tokens:,} tokens ($0.0000), each later one "
    assert line + f"{later_tokens:,} tokens ($0.0000) on average; 4 sub-calls reused" in done.stdout


def test_memory_on_a_ray_executor_is_refused_in_one_line(tmp_path):
    done = _eval(tmp_path, "--memory", str(tmp_path / "m"), "--executor", "ray")
    assert done.returncode == 2 and "--memory needs --executor thread" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_madqa_prompt_which_binds_no_note_tools_is_not_told_of_them(store, tmp_path):
    root = Recording([f"FINAL({ANSWER})"])
    RLM(store, model=root, prompt="madqa", memory=tmp_path / "m").ask("How many?")
    assert "notes from earlier questions" not in json.dumps(root.seen[0])
