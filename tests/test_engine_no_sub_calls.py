"""`RLM(..., sub_calls=False)`: the REPL without `llm_query` / `llm_query_batched` /
`rlm_query` (the RLM paper's ablation), through the real sandbox."""

import pytest

from rlm_docs.corpus import Corpus
from rlm_docs.engine import RLM
from rlm_docs.engine.trajectory import load_trajectory
from rlm_docs.eval.dataset import load_questions
from rlm_docs.governor import Ledger
from rlm_docs.models import ScriptedClient
from tests.fixtures.eval.support import DOCS, QUESTIONS

PROBE = (
    "```repl\n"
    + "".join(
        f'try:\n    f = {name}\n    print("{name} bound")\nexcept NameError:\n    print("{name} missing")\n'
        for name in ("llm_query", "llm_query_batched", "rlm_query", "cite", "search")
    )
    + "```"
)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return Corpus.from_documents(DOCS).save(tmp_path_factory.mktemp("corpus") / "store")


@pytest.mark.parametrize("prompt", ["docs", "madqa"])
def test_sub_call_functions_are_not_bound_and_the_prompt_never_names_them(store, tmp_path, prompt):
    root = ScriptedClient([PROBE, "FINAL(done)"])
    ledger = Ledger()
    rlm = RLM(store, model=root, prompt=prompt, sub_calls=False, ledger=ledger, log_dir=tmp_path)
    p = rlm.ask("Which Initech executive will retire?", question_id="q")
    system = root.calls[0][0]["content"]
    assert "llm_query" not in system and "rlm_query" not in system
    probe = root.calls[1][-1]["content"]
    for name in ("llm_query", "llm_query_batched", "rlm_query"):
        assert f"{name} missing" in probe
    # the other names are as the prompt offers them (madqa: only `context` and SHOW_VARS)
    helpers = "bound" if prompt == "docs" else "missing"
    assert f"cite {helpers}" in probe and f"search {helpers}" in probe
    assert p.sub_calls == 0 and {e.role for e in ledger.entries} <= {"root", "extract"}
    assert load_trajectory(p.trajectory).metadata.sub_calls is False


def test_with_sub_calls_the_same_probe_finds_them_bound(store, tmp_path):
    root = ScriptedClient([PROBE, "FINAL(done)"])
    RLM(store, model=root, prompt="docs").ask("Which Initech executive will retire?")
    assert "llm_query" in root.calls[0][0]["content"]
    assert "llm_query_batched bound" in root.calls[1][-1]["content"]


def test_offline_root_reads_pages_in_the_repl_when_it_has_no_sub_model(store):
    q = load_questions(QUESTIONS)[4]  # Globex employees, page 3
    rlm = RLM(store, model="offline", sub_calls=False)
    p = rlm.ask(q.question, question_id=q.id)
    code = rlm.last_trajectory.code_blocks[0].code
    assert "read_all(" in code and "llm_query" not in code
    assert p.sub_calls == 0 and p.stop_reason == "final"
    assert "12,500" in " ".join(p.answer)
    assert {"file": "globex_2021_10k", "page": 3} in p.citations


def test_the_no_sub_call_prompts_follow_their_base_prompts():
    """The docs ablation is derived from docs.txt: every line of it but the sub-call ones, so a
    wording change to the base prompt reaches the ablation. madqa's is a file of its own whose
    tail must follow madqa's."""
    from rlm_docs.engine.prompts import docs_without_sub_calls
    from rlm_docs.templates import load_template

    docs = load_template("docs")
    ablation = docs_without_sub_calls(docs)
    lines = ablation.split("\n")
    for word in ("llm_query", "rlm_query", "sub-call"):
        assert word not in ablation
    kept = [
        line
        for line in docs.split("\n")
        if not any(w in line for w in ("llm_query", "rlm_query", "sub-call"))
    ]
    assert kept and all(line in lines for line in kept)
    assert len(lines) == len(kept) + 1  # the budget sentence without sub-calls
    madqa, ablation = load_template("madqa"), load_template("madqa_no_sub_calls")
    tail = "IMPORTANT: When you are done"
    assert ablation[ablation.index(tail) :] == madqa[madqa.index(tail) :].replace(
        "Output to the REPL environment and recursive LLMs", "Output to the REPL environment"
    )
    assert "llm_query" not in ablation and "rlm_query" not in ablation
