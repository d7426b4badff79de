"""Page titles carried by hits, and financial-statement detection, on pages written here in the
shapes pdftotext and markdown conversion produce."""

from rlm_docs.corpus import Corpus
from rlm_docs.corpus.headings import page_kind, page_title

ROWS = "".join(
    f"    Line item {i:<40} $ {1000 + 37 * i:>8,}   $ {900 + 29 * i:>8,}\n" for i in range(20)
)
BALANCE = (
    "Table of Contents\n\n\n3M Company and Subsidiaries\nConsolidated Balance Shee t\n"
    "At December 31\n   (Dollars in millions)          2018        2017\n" + ROWS
)
CASH = (
    "                 ACME INC.\n      CONSOLIDATED STATEMENTS OF CASH FLOWS\n (In thousands)\n"
    + ROWS
)
PROSE = (
    "certain other instruments, including loans and off-balance-sheet credit exposures. The\n"
    "balance sheet remained strong during the year, and cash flows improved.\n" * 5
)
NOTE = "Table of Contents\n\nNote 5 - Acquisitions and Divestitures:\n\nOn August 1 we bought a plant.\n"
MARKDOWN = "Some intro text\n\n## Segment results\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
INDEX = (
    "INDEX TO FINANCIAL STATEMENTS\nConsolidated Balance Sheets          52\n"
    "Consolidated Statements of Income    53\n"
)


def test_titles() -> None:
    assert page_title(BALANCE) == "Consolidated Balance Shee t"  # not the company line
    assert page_title(CASH) == "CONSOLIDATED STATEMENTS OF CASH FLOWS"
    assert page_title(NOTE) == "Note 5 - Acquisitions and Divestitures"
    assert page_title(MARKDOWN) == "Segment results"
    assert page_title(PROSE) == ""  # running text continued from the previous page
    assert page_title("") == ""
    assert page_title("x" * 10_000) == ""
    assert len(page_title("# " + "Long heading " * 30)) == 100


def test_statement_kind_needs_a_title_and_figures() -> None:
    assert page_kind(BALANCE) == "balance"
    assert page_kind(CASH) == "cashflow"
    assert page_kind("CONSOLIDATED STATEMENTS OF OPERATIONS\n" + ROWS) == "income"
    assert page_kind("Statement of Financial Position\n" + ROWS) == "balance"
    assert page_kind("Consolidated Statements of Shareholders' Equity\n" + ROWS) == "equity"
    assert page_kind(PROSE + ROWS) is None  # mentions, not a title
    assert page_kind(INDEX) is None  # statement names but no figures: an index page
    assert page_kind("Consolidated Balance Sheets\nSee the notes.\n") is None


def test_every_hit_carries_its_page_title() -> None:
    corpus = Corpus.from_documents({"ACME_2018_10K": [PROSE, BALANCE, NOTE, CASH]})
    hits = corpus.search("balance sheet cash flows acquisitions", k=4)
    titles = {h.page: h.title for h in hits}
    assert titles == {
        1: "",
        2: "Consolidated Balance Shee t",
        3: "Note 5 - Acquisitions and Divestitures",
        4: "CONSOLIDATED STATEMENTS OF CASH FLOWS",
    }
    assert hits[0].to_dict()["title"] == titles[hits[0].page]


def test_sec_form_boilerplate_pages() -> None:
    cover = (
        "UNITED STATES\nSECURITIES AND EXCHANGE COMMISSION\nWashington, D.C. 20549\n\n"
        "FORM 8-K\n\nCURRENT REPORT\nDate of Report: July 1, 2022\n"
    )
    assert page_kind(cover) == "form"
    assert page_kind("SIGNATURES\nPursuant to the requirements of the Act ...\n") == "form"
    assert page_kind("Exhibit 31.1\nCERTIFICATION\nI, Jane Doe, certify that ...\n") == "form"
    assert page_kind("Table of Contents\nEXHIBIT INDEX\n3.1 Articles\n") == "form"
    assert page_kind("Item 5. Other Events\nThe board approved the plan.\n") is None
    assert page_kind(PROSE) is None
