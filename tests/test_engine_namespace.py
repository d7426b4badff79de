"""What a run binds in the sandbox: a prompt binds only the names it introduces, the engine
never overwrites a variable the model created, and pages read are recorded by the helpers."""

from pathlib import Path

import pytest

from rlm_docs.engine import RLM
from rlm_docs.models import ScriptedClient
from tests.fixtures.engine import repl, saved_store

DOCS = {
    "acme_2020_10k": ["Cover page.", "Total revenue was $412 million in 2020.", "Assets."],
    "globex_2021_10k": ["Globex annual report.", "Net income was $55 million."],
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return saved_store(tmp_path_factory, DOCS)


def run(store: Path, replies: list[str], **kwargs) -> tuple:
    root = ScriptedClient(replies)
    rlm = RLM(store, model=root, sub_model=ScriptedClient([]), **kwargs)
    return rlm.ask("What was Acme's revenue?"), root


def test_madqa_keeps_the_models_own_files_and_pages_variables(store):
    pred, root = run(
        store,
        [
            repl("files = ['a.pdf', 'b.pdf']\npages = {'a.pdf': 3}\nanswer = 'draft'"),
            repl("print(files[0], pages['a.pdf'], answer)\nprint(sorted(SHOW_VARS()))"),
            "FINAL(done)",
            '{"answer": ["done"], "citations": []}',
        ],
        prompt="madqa",
    )
    feedback = root.calls[2][-1]["content"]
    assert "a.pdf 3 draft" in feedback and "TypeError" not in feedback
    assert "['answer', 'files', 'pages']" in feedback  # the model's three variables, no helpers
    assert pred.stop_reason == "final"


def test_madqa_binds_only_the_names_its_prompt_introduces(store):
    absent = ("page", "pages", "files", "search", "cite", "pages_read", "answer", "corpus")
    probe = "".join(f"try:\n    {n}\nexcept NameError:\n    gone.append('{n}')\n" for n in absent)
    _, root = run(
        store,
        [
            repl(
                "gone = []\n" + probe + "print(gone)\nprint(len(context) > 0, callable(llm_query))"
            ),
            "FINAL(x)",
            '{"answer": ["x"]}',
        ],
        prompt="madqa",
    )
    assert f"{list(absent)}\nTrue True" in root.calls[1][-1]["content"]


def test_docs_prompt_rebinding_a_helper_name_keeps_the_models_value(store):
    _, root = run(
        store,
        [
            repl("pages = pages('acme_2020_10k', 1, 2)"),
            repl("print(isinstance(pages, str), pages.count('=== acme_2020_10k page'))\ndel page"),
            repl("print(page('acme_2020_10k', 3))"),
            "FINAL(x)",
            '{"answer": ["x"]}',
        ],
    )
    assert "True 2" in root.calls[2][-1]["content"]  # kept, not replaced by the helper
    assert "Assets." in root.calls[3][-1]["content"]  # a deleted helper comes back


def test_pages_read_are_recorded_and_used_when_nothing_is_cited(store):
    pred, root = run(
        store,
        [
            repl(
                "x = page('ACME_2020_10K', 2)\ny = pages('globex_2021_10k', 1, 2)\nprint(pages_read())"
            ),
            'FINAL({"answer": ["$412 million"]})',
        ],
    )
    shown = root.calls[1][-1]["content"]
    assert "[['acme_2020_10k', 2], ['globex_2021_10k', 1], ['globex_2021_10k', 2]]" in shown
    assert pred.citations == [
        {"file": "acme_2020_10k", "page": 2},
        {"file": "globex_2021_10k", "page": 1},
        {"file": "globex_2021_10k", "page": 2},
    ]


def test_offline_model_under_madqa_reads_context_and_cites_its_page_markers(store):
    pred = RLM(store, model="offline", prompt="madqa").ask("What was Acme's total revenue in 2020?")
    assert pred.stop_reason == "final"
    assert any("412" in a for a in pred.answer)
    assert pred.citations == [{"file": "acme_2020_10k", "page": 2}]


def test_model_code_cannot_change_the_pages_the_run_falls_back_on(store):
    pred, _ = run(
        store,
        [
            repl(
                "x = page('ACME_2020_10K', 2)\npages_read().append(['globex_2021_10k', 1])\n"
                "pages_read = [['globex_2021_10k', 2]]\ndel pages_read"
            ),
            'FINAL({"answer": ["$412 million"]})',
        ],
    )
    assert pred.citations == [{"file": "acme_2020_10k", "page": 2}]
