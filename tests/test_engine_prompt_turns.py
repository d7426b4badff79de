"""What the root sees each turn: the docs prompt's short turns (no echoed code, no repeated
question), madqa's rlms-faithful turns, the output cap and page numbering stated in the
prompt, and the flag on citing a page that was never read."""

from pathlib import Path

import pytest

from rlm_docs.engine import RLM
from rlm_docs.models import ScriptedClient
from tests.fixtures.engine import saved_store

DOCS = {"acme_2020_10k": ["Cover page.", "Total revenue was $412 million in 2020."]}
CODE = "x = 6 * 7\nprint('the value is', x)"
QUESTION = "What was Acme's revenue in 2020?"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return saved_store(tmp_path_factory, DOCS)


def turns(store: Path, replies: list[str], **kwargs) -> list[list[dict]]:
    root = ScriptedClient([*replies, '{"answer": ["x"]}'])
    RLM(store, model=root, sub_model=ScriptedClient([]), **kwargs).ask(QUESTION)
    return root.calls


def test_docs_turns_show_only_the_output_not_the_code_or_the_question_again(store):
    calls = turns(store, [f"```repl\n{CODE}\n```", "FINAL(x)"])
    second = calls[1][-1]["content"]
    assert second.startswith("[Turn 2 of 20]\nOutput:\nthe value is 42")
    assert "x = 6 * 7" not in second and QUESTION not in second
    system = calls[0][0]["content"]
    assert "capped at 20,000 characters" in system
    assert "NOT the number printed on the page" in system
    assert "figures, charts and images are not visible" in system
    assert "does not say which document, entity or period it means" in system
    assert "Modules you can import" in system and "re, json, math" in system
    assert "[END PAGE N]" in system and "In the above data" in system


def test_the_output_cap_in_the_prompt_follows_the_setting(store):
    calls = turns(store, ["FINAL(x)"], max_output_chars=5_000)
    assert "capped at 5,000 characters" in calls[0][0]["content"]


def test_madqa_turns_keep_rlms_wording_and_echo(store):
    calls = turns(store, [f"```repl\n{CODE}\n```", "FINAL(x)"], prompt="madqa")
    second = calls[1][-1]["content"]
    assert f"Code executed:\n```python\n{CODE}\n```" in second
    assert f'answer the original prompt: "{QUESTION}"' in second


def test_citing_an_unread_page_is_allowed_but_flagged(store):
    calls = turns(
        store,
        [
            "```repl\ncite('acme_2020_10k', 2)\n```",
            "```repl\nt = page('acme_2020_10k', 1)\ncite('acme_2020_10k', 1)\n```",
            "FINAL(x)",
        ],
    )
    flagged = calls[1][-1]["content"]
    assert (
        "cited without reading it with page/pages/lines/read_section: acme_2020_10k p.2" in flagged
    )
    assert "cited without reading" not in calls[2][-1]["content"]


def test_the_docs_prompt_examples_name_a_document_of_the_corpus_loaded(store):
    (system, *_), *_ = turns(store, ["FINAL(x)"])
    text = system["content"]
    assert '(e.g. "acme_2020_10k")' in text
    assert "3M" not in text and "{example_doc}" not in text
