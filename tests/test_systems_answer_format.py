"""Every baseline asks for the answer record as JSON and says that it wins over a format the
question asks for (OOLONG's "Answer: number", OOLONG-Pairs' "separated by newlines"), and reads
the record back into the prediction."""

import json

import pytest

from rlm_docs.corpus import Corpus
from rlm_docs.governor import Budget, Governor, Ledger
from rlm_docs.questions import Question
from rlm_docs.systems import SystemConfig, make_system
from tests.fixtures.eval.support import DOCS

CORPUS = Corpus.from_documents(DOCS)
OOLONG_STYLE = Question(
    id="count",
    question=(
        "How many filings mention revenue? Give your final answer in the form 'Answer: number'."
    ),
    answer_variants=[["2"]],
)
RECORD = {
    "values": ["Answer: 2"],
    "explanation": "acme_2022_10k and globex_2021_10k mention revenue.",
    "caveat": "",
    "citations": [{"file": "acme_2022_10k", "page": 2}],
}
RULE = "this JSON reply still wins: put what that format asks for into values"


def _answer(tmp_path, name: str, **options):
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([json.dumps(RECORD)] * 3))
    config = SystemConfig(
        corpus=CORPUS, model=f"scripted:{script}", budget=Budget(), options=options
    )
    system = make_system(name, config)
    gov = Governor(config.budget, ledger=Ledger(), question_id=OOLONG_STYLE.id)
    return system, system.answer(OOLONG_STYLE, gov)


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("static-rag", {}),
        ("bm25-agent", {"max_iterations": 1}),
        ("long-context", {"context_window": 32000}),
    ],
)
def test_baselines_ask_for_the_record_and_say_their_format_wins(tmp_path, name, options):
    system, prediction = _answer(tmp_path, name, **options)
    prompt = "\n".join(m["content"] for m in system.client.calls[0])
    assert RULE in prompt and '{"values": ["..."], "explanation": "..."' in prompt
    assert "a count as one item (the number)" in prompt and "{answer_format}" not in prompt
    assert '{"answer"' not in prompt  # no second, conflicting reply format
    assert prediction.answer == ["Answer: 2"]
    assert prediction.explanation == RECORD["explanation"] and prediction.caveat == ""
    assert prediction.citations == [{"file": "acme_2022_10k", "page": 2}]


def test_map_reduce_reduce_prompt_carries_the_same_format(tmp_path):
    config = SystemConfig(corpus=CORPUS, model="offline", options={"context_window": 32000})
    system = make_system("map-reduce", config)
    prompt, _ = system._reduce_prompt(OOLONG_STYLE.question, ["NO RELEVANT TEXT"])
    assert RULE in prompt and "exactly as shown in the notes" in prompt
