"""Host-side analysis of model-written cells never fails a question: code nested too deeply to
analyse is counted in the decomposition record (`cells_unanalysed`), the run's results are
written, and `--resume` replaying the same cached reply finishes too."""

import json

import pytest

from rlm_docs.cli import main
from rlm_docs.corpus import Corpus
from rlm_docs.engine import RLM
from rlm_docs.eval.decomposition import decompose
from rlm_docs.models import ScriptedClient
from tests.fixtures.engine import repl, saved_store
from tests.fixtures.eval.support import QUESTIONS, build_store
from tests.servers.chat import ChatServer

DEEP_SLICE = "x = context[" + "+".join(["1"] * 2000) + ":5]"  # RecursionError in a naive walk
DEEP_NOT = "x = " + "not " * 100_000 + "1"  # MemoryError from the parser
DONE = repl('res = {"answer": ["done"], "citations": []}') + "\nFINAL_VAR(res)"


@pytest.mark.parametrize("code", [DEEP_SLICE, DEEP_NOT], ids=["deep-slice", "deep-not"])
def test_a_cell_too_deep_to_analyse_is_counted_not_raised(tmp_path_factory, code) -> None:
    store = saved_store(tmp_path_factory, {"memo": ["The budget was $12 million.", "Other."]})
    rlm = RLM(store, model=ScriptedClient([repl(code), repl("page('memo', 1)"), DONE]))
    rlm.ask("What was the budget?", question_id="q")
    record = decompose(rlm.last_trajectory, [], Corpus.load(store))
    assert record.cells == 3 and record.cells_unanalysed == 1
    assert "direct-read" in record.strategies  # the other cell is still analysed


def test_eval_writes_results_and_resumes_over_the_cached_hostile_reply(
    rlm_home, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-000000000000000000")
    monkeypatch.setenv("RLM_DOCS_CACHE", str(tmp_path / "cache.sqlite"))
    store = build_store(tmp_path / "store")
    requests = []

    def reply(messages: list[dict]) -> str:
        requests.append(messages)
        return DONE if any(m["role"] == "assistant" for m in messages) else repl(DEEP_SLICE)

    out = tmp_path / "run"
    with ChatServer(reply=reply) as srv:
        argv = [
            "eval", "--dataset", str(QUESTIONS), "--corpus", str(store), "--system", "rlm",
            "--model", f"openai:fake@{srv.base_url}", "--out", str(out), "--limit", "1",
            "--no-progress",
        ]  # fmt: skip
        assert main(argv) == 0
        results = out / "results.jsonl"
        (record,) = [json.loads(line) for line in results.read_text().splitlines()]
        assert record["status"] == "ok" and record["cells_unanalysed"] == 1
        results.write_text("")  # as if the first run had died before recording the question
        asked = len(requests)
        assert main([*argv, "--resume"]) == 0
    assert len(requests) == asked  # every reply came from the response cache
    (again,) = [json.loads(line) for line in results.read_text().splitlines()]
    assert again["id"] == record["id"] and again["cells_unanalysed"] == 1
