"""The offline root's REPL code as real functions: called directly on the host against the real
corpus helpers, and shipped to the sandbox as cells its restricted dialect compiles."""

import pytest

from rlm_docs.corpus import Corpus
from rlm_docs.offline import ship
from rlm_docs.offline.reader import read
from rlm_docs.offline.repl import compute, context, corpus, needle, oolong, readings, statements
from rlm_docs.offline.root import plan, root_code
from rlm_docs.offline.workloads import CLASSIFY_HEAD, cell_for, classification_reply, parse_task
from rlm_docs.repl.helpers import make_helpers
from rlm_docs.trec_labels import LABELS
from sandbox.policy import compile_cell
from tests.fixtures.offline import BALANCE, DOCS, NARRATIVE, STATEMENT


@pytest.fixture(scope="module")
def helpers() -> dict:
    return make_helpers(Corpus.from_documents(DOCS))


def _reader(prompts: list[str]) -> list[str]:
    """The offline sub-model's reader, as `llm_query_batched` would return it."""
    return [read(p) for p in prompts]


def _ask(helpers: dict, question: str) -> tuple[dict, list]:
    cited: list = []
    found = corpus.answer_from_corpus(
        plan(question),
        helpers["search"],
        helpers["page"],
        helpers["files"],
        lambda d, p: cited.append((d, p)),
        _reader,
    )
    return found, cited


def test_corpus_policy_called_directly(helpers, capsys):
    found, cited = _ask(helpers, "What were Acme's FY2020 net sales? Answer in USD millions.")
    assert found["values"] == ["$412"]
    assert found["citations"] == [{"file": "ACME_2020_10K", "page": 3}]
    assert found["explanation"] == "Read from ACME_2020_10K page 3."
    assert cited == [("ACME_2020_10K", 3)]
    out = capsys.readouterr().out
    assert "likely filings: ['ACME_2020_10K', 'ACME_2019_10K']" in out
    assert readings.READY in out


def test_computed_answer_replaces_the_extractive_one(helpers):
    found, cited = _ask(helpers, "What is Acme's FY2020 operating income % margin?")
    assert found["values"] == ["19.8%"]  # 81,835 / 412,345
    assert ("ACME_2020_10K", 3) in cited


def test_likely_filings_use_the_corpus_name_parsing(helpers):
    from rlm_docs.offline.repl.filings import likely_filings

    quarter = plan("What were Acme's net sales in Q2 of FY2020?")
    assert likely_filings(quarter, helpers["search"], helpers["files"])[0] == "ACME_2020Q2_10Q"
    jnj = plan("How many employees did JnJ have worldwide?")
    assert likely_filings(jnj, helpers["search"], helpers["files"]) == ["JOHNSON_JOHNSON_2020_10K"]
    assert likely_filings(plan("What?"), helpers["search"], helpers["files"]) == []


def test_statement_pages_and_rows():
    assert statements.is_statement(STATEMENT, [statements.STATEMENT_TITLES["income"]])
    assert not statements.is_statement(BALANCE, [statements.STATEMENT_TITLES["income"]])
    assert not statements.is_statement(NARRATIVE, statements.ALL_TITLES)
    assert compute.row_numbers("Cost of sales   (250,000)   (240,600)") == [-250000.0, -240600.0]
    assert compute.row_label("Property, plant and equipment, net  200,000") == (
        "property, plant and equipment, net"
    )
    lines = STATEMENT.splitlines()
    row = next(i for i, line in enumerate(lines) if line.startswith("Net income"))
    assert compute.year_cell(lines, row, "2019") == 60200.0
    assert compute.year_cell(lines, row, "2018") is None


def test_readings_are_scored_and_formatted():
    p = plan("What were Acme's FY2020 net sales in USD billions? Round to three decimal places.")
    assert readings.pick_value("Net sales  412,345  398,100 [2020: 412,345]", p) == "412,345"
    text = "ACME\n(in thousands)\n"
    assert readings.formatted("412,345", text, "Net sales", p) == "$0.412"
    assert readings.formatted("(250,000)", text, "Cost of sales", p) == "-$0.250"
    assert readings.score_reading(readings.NOT_FOUND, 0, p) == -1.0
    assert readings.read_all(["Question: q\n\nNet sales grew.\nOther."], ["sales"]) == [
        "Net sales grew."
    ]


def test_context_paragraphs_and_their_citation():
    text = "[FILE: a.pdf | TOTAL PAGES: 2]\n[PAGE 1]\nRevenue was $5 million.\n[END PAGE 1]"
    chunks, starts = context.paragraphs(text)
    assert chunks[1] == "[PAGE 1]\nRevenue was $5 million."
    assert context.marker_citation(text, starts[1]) == [{"file": "a.pdf", "page": 1}]
    found = context.answer_from_context(plan("What was the revenue?"), text, _reader)
    assert found == {"values": ["$5 million"], "citations": [{"file": "a.pdf", "page": 1}]}


def test_oolong_rows_classified_counted_and_budget_refusal():
    entries = [
        "Date: Jan 02, 2023 || User: 7 || Instance: Who killed Gandhi ?",
        "Date: Feb 03, 2023 || User: 7 || Instance: Why does it snow ?",
        "Date: Feb 04, 2023 || User: 9 || Instance: Who wrote Hamlet ?",
    ]
    rows = oolong.parse_rows("\n".join(entries))
    assert rows[1]["day"] == "2023-02-03" and rows[2]["user"] == 9

    class Refused(Exception):
        pass

    calls: list[int] = []

    def read_twice(prompts: list[str]) -> list[str]:
        if len(prompts) > 1 or len(calls) >= 2:
            raise Refused("no sub-calls left")
        calls.append(1)
        return [classification_reply(prompts[0]) or ""]

    oolong.classify_rows(rows, 1, CLASSIFY_HEAD, list(LABELS), read_twice, Refused)
    assert [r["label"] for r in rows] == ["human being", "description and abstract concept", None]
    task = parse_task(
        "In the above data, how many data points should be classified as label 'human being'?"
    )
    assert oolong.aggregate_answer(task, rows, list(LABELS))["values"] == ["Answer: 1"]
    assert oolong.top_user_answer(rows)["values"] == ["User: 7"]


def test_needle_lookup_cites_the_line(helpers):
    cited: list = []
    found = needle.needle_answer(
        {"keys": ["Worldwide employees"]}, helpers["grep"], lambda d, p: cited.append((d, p))
    )
    assert found["values"] == ["134500"]
    assert found["citations"] == [{"file": "JOHNSON_JOHNSON_2020_10K", "page": 2}]
    assert cited == [("JOHNSON_JOHNSON_2020_10K", 2)]


@pytest.mark.parametrize(
    "code",
    [
        root_code("What were Acme's FY2020 net sales? Answer in USD millions.", True),
        root_code("What is Acme's FY2020 operating income % margin?", True, sub_calls=False),
        root_code("What was the revenue?", False),
        cell_for({"kind": "needle", "keys": ["a"]}),
        cell_for({"kind": "top_user"}),
        cell_for({"kind": "count", "label": "entity", "scope": {}}),
        cell_for({"kind": "pairs", "rule": {"both": ["entity", "location"]}}),
    ],
)
def test_every_shipped_cell_compiles_under_the_sandbox_policy(code):
    compile_cell(code, "<offline>")
    assert "OFFLINE_ANSWER_READY" not in code  # the root waits for it in the output only


def test_shipping_strips_annotations_and_checks_module_order():
    source = ship.module_source(compute, {"rlm_docs.offline.repl.statements"})
    assert "def row_numbers(line):" in source and "import" not in source.split("def")[0].replace(
        "import re", ""
    )
    with pytest.raises(ValueError, match="statements must be shipped before"):
        ship.module_source(compute, set())
