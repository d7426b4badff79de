"""Model-side failures end as predictions with the trajectory written, never as tracebacks."""

from pathlib import Path

import pytest

from rlm_docs.corpus import Corpus
from rlm_docs.engine import RLM
from rlm_docs.engine.trajectory import load_trajectory
from rlm_docs.models import ScriptedClient

DOCS = {"memo": ["The widget budget for 2024 was $12 million.", "Nothing else of note."]}
DEEP = "deep = []\nfor _ in range(60):\n    deep = [deep]\n"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return Corpus.from_documents(DOCS).save(tmp_path_factory.mktemp("corpus") / "store")


def repl(code: str) -> str:
    return f"```repl\n{code}\n```"


def test_answer_nested_too_deeply_is_reported_and_the_run_goes_on(store, tmp_path) -> None:
    root = ScriptedClient(
        [
            repl(DEEP + "answer['content'] = deep\nanswer['ready'] = True"),
            repl(DEEP) + "\nFINAL_VAR(deep)",
            repl("pages_read = deep") + "\nFINAL(the budget was $12 million)",
            '{"answer": ["$12 million"], "citations": []}',
        ]
    )
    rlm = RLM(store, model=root, log_dir=tmp_path)
    pred = rlm.ask("How much was the widget budget?")
    assert pred.answer == ["$12 million"] and pred.stop_reason == "final"
    assert "`answer` cannot be read" in root.calls[1][-1]["content"]
    assert "FINAL_VAR(deep): the value cannot be read" in root.calls[2][-1]["content"]
    assert load_trajectory(pred.trajectory).result is not None


def test_host_exception_with_a_huge_message_is_capped_and_caught_in_the_cell(store, tmp_path):
    code = (
        "try:\n    cite('x' * 5000000, 1)\nexcept CorpusError as e:\n    n = len(str(e))\n"
        "try:\n    llm_query('hi', model='m' * 5000000)\nexcept PermissionError as e:\n"
        "    m = len(str(e))\nprint(n, m)"
    )
    root = ScriptedClient([repl(code), "FINAL(done)", "{}"])
    rlm = RLM(store, model=root, log_dir=tmp_path)
    pred = rlm.ask("q?")
    block = load_trajectory(pred.trajectory).iterations[0].code_blocks[0].result
    n, m = map(int, block.stdout.split())
    assert n <= 20_100 and m < 300 and not block.restarted
    assert pred.stop_reason == "final" and Path(pred.trajectory).stat().st_size < 200_000


def test_an_unexpected_failure_in_the_run_is_an_error_prediction(store, tmp_path) -> None:
    class Broken(ScriptedClient):
        def complete(self, messages, **kw):
            raise ValueError("x" * 100_000)

    pred = RLM(store, model=Broken([]), log_dir=tmp_path).ask("q?")
    assert pred.stop_reason == "error" and pred.error.startswith("ValueError: xxx")
    assert len(pred.error) < 2_100
    assert load_trajectory(pred.trajectory).result.stop_reason == "error"


def test_host_call_arguments_over_the_call_limit_stay_in_the_worker(store, tmp_path) -> None:
    code = (
        "try:\n    llm_query('hi', model='m' * 9000000)\nexcept ValueError as e:\n"
        "    print(str(e)[:80])"
    )
    root = ScriptedClient([repl(code), "FINAL(done)", "{}"])
    pred = RLM(store, model=root, log_dir=tmp_path).ask("q?")
    block = load_trajectory(pred.trajectory).iterations[0].code_blocks[0].result
    assert block.stdout.startswith("llm_query() arguments are too large: 9,000,")
    assert block.sub_calls == [] and not block.restarted
