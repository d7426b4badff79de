"""The offline root policy picks the filing the question names, reads the financial statement
page it needs, and states amounts in the unit the question asks for."""

import pytest

from rlm_docs.corpus import Corpus
from rlm_docs.engine import RLM
from rlm_docs.offline.computation import computation
from rlm_docs.offline.question import asked_decimals, asked_unit, quarter_of, statement_titles
from tests.fixtures.offline import DOCS


@pytest.fixture(scope="module")
def rlm(tmp_path_factory: pytest.TempPathFactory) -> RLM:
    store = Corpus.from_documents(DOCS).save(tmp_path_factory.mktemp("nav") / "store")
    return RLM(store, model="offline")


def test_statement_cell_of_the_named_year_in_the_asked_unit(rlm):
    q = "Using the income statement, what were Acme's FY2020 net sales? Answer in USD millions."
    pred = rlm.ask(q)
    assert pred.citations == [{"file": "ACME_2020_10K", "page": 3}]
    assert pred.answer == ["$412"]  # 412,345 thousands -> millions, the 2020 column


def test_rounding_and_negative_amounts(rlm):
    q = (
        "What was Acme's FY2019 cost of sales in USD billions? "
        "Round your answer to three decimal places."
    )
    pred = rlm.ask(q)
    assert pred.citations == [{"file": "ACME_2020_10K", "page": 3}]
    assert pred.answer == ["-$0.241"]


def test_quarter_question_reads_the_quarterly_filing(rlm):
    pred = rlm.ask("What were Acme's net sales in Q2 of FY2020?")
    assert pred.citations == [{"file": "ACME_2020Q2_10Q", "page": 2}]
    assert pred.answer == ["$101.5 million"]


def test_company_initials_find_the_filing(rlm):
    pred = rlm.ask("How many employees did JnJ have worldwide?")
    assert pred.citations == [{"file": "JOHNSON_JOHNSON_2020_10K", "page": 2}]
    assert pred.answer == ["134,500"]


def test_question_parsing_helpers():
    q = "What is JPM's FY2018 capex? Answer in USD billions. Round to two decimal places."
    assert asked_unit(q) == "billions" and asked_decimals(q) == 2
    assert asked_unit("What was revenue?") == "" and asked_decimals("What was revenue?") is None
    assert quarter_of("in the second fiscal quarter of 2023") == "2"
    assert quarter_of("Q3 FY2022") == "3" and quarter_of("H1 FY2023") == "2"
    assert quarter_of("FY2022") == ""
    assert len(statement_titles("net PPNE shown in the balance sheet")) == 1
    assert statement_titles("Who is the CEO?") == []


def test_defined_ratio_with_an_average_is_computed_from_both_statements(rlm):
    q = (
        "What is Acme's FY2020 inventory turnover ratio? Inventory turnover ratio is defined "
        "as: (FY2020 COGS) / (average inventories between FY2019 and FY2020). Round your "
        "answer to two decimal places."
    )
    pred = rlm.ask(q)
    assert pred.answer == ["10.00"]  # (250,000) / ((30,000 + 20,000) / 2): a cost by its size
    assert pred.citations == [
        {"file": "ACME_2020_10K", "page": 3},
        {"file": "ACME_2020_10K", "page": 5},
    ]


def test_year_over_year_change_and_margin(rlm):
    change = rlm.ask(
        "What is Acme's year-over-year change in net sales from FY2019 to FY2020 "
        "(in units of percents and round to one decimal place)?"
    )
    assert change.answer == ["3.6%"]  # (412,345 - 398,100) / 398,100
    assert change.citations == [{"file": "ACME_2020_10K", "page": 3}]
    margin = rlm.ask("What is Acme's FY2020 operating income % margin?")
    assert margin.answer == ["19.8%"]  # 81,835 / 412,345


def test_only_named_computations_are_attempted():
    ratio = computation(
        "Define working capital ratio as total current assets divided by total current liabilities."
    )
    assert ratio is not None and ratio["kind"] == "ratio"
    assert ratio["num"]["query"] == "total current assets" and ratio["den"]["years"] == []
    assert computation("CCC is defined as: DIO + DSO - DPO. DIO is defined as: 365 * x / y") is None
    assert computation("What was Acme's net sales in FY2020?") is None
    assert computation("What drove operating margin change as of FY2022?") is None


def test_cagr_and_multi_year_average_margin(rlm):
    cagr = rlm.ask("What is Acme's 1 year net sales CAGR from FY2019 to FY2020?")
    assert cagr.answer == ["3.6%"]
    average = rlm.ask(
        "What is the FY2019 - FY2020 2 year average operating income % margin for Acme? "
        "Round to two decimal places."
    )
    assert average.answer == ["19.91%"]  # mean of 81,835 / 412,345 and 79,500 / 398,100
    assert average.citations == [{"file": "ACME_2020_10K", "page": 3}]


def test_no_answer_when_nothing_matches_and_per_share_values_unscaled(rlm):
    nothing = rlm.ask("What?")
    assert nothing.answer == [] and nothing.citations == []
    shares = rlm.ask("What were Acme's FY2020 diluted shares in USD millions?")
    assert shares.answer == ["$10.10"]  # 10,100 thousands, in the table's unit: scaled
    eps = rlm.ask("What were Acme's FY2020 diluted earnings per share in USD millions?")
    assert eps.answer == ["6.18"]  # "in thousands" does not apply to per-share amounts
    assert eps.citations == [{"file": "ACME_2020_10K", "page": 3}]
