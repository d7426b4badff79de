"""Sections: toc and read_section over markdown headings, plain-text cues and bare pages."""

import pytest

from rlm_docs.corpus import Corpus
from rlm_docs.corpus.sections import outline, read_section, section_paragraphs, toc
from rlm_docs.errors import CorpusError

MD_PAGES = [
    "# Annual Report\n\nIntro paragraph.\n\n## Risk Factors\n\nRisk one.\n\nRisk two.",
    "Risk three continues here.\n\n## Financial Statements\n\n| Item | 2018 |\n|---|---|\n| Net PPE | 8,738 |",
    "# Exhibits\n\nExhibit list.",
]


def test_outline_from_markdown_headings_with_page_spans():
    entries = outline(MD_PAGES)
    assert [(e["section"], e["title"], e["level"]) for e in entries] == [
        ("s1", "Annual Report", 1),
        ("s2", "Risk Factors", 2),
        ("s3", "Financial Statements", 2),
        ("s4", "Exhibits", 1),
    ]
    spans = {e["title"]: (e["page_start"], e["page_end"]) for e in entries}
    # Annual Report runs until "# Exhibits", which starts page 3, so it ends on page 2.
    assert spans["Annual Report"] == (1, 2)
    assert spans["Risk Factors"] == (1, 2)
    assert spans["Financial Statements"] == (2, 2)
    assert spans["Exhibits"] == (3, 3)


def test_section_paragraphs_cross_pages_and_keep_page_numbers():
    paras = section_paragraphs(MD_PAGES, "risk")
    assert [p["text"] for p in paras] == [
        "## Risk Factors",
        "Risk one.",
        "Risk two.",
        "Risk three continues here.",
    ]
    assert [p["page"] for p in paras] == [1, 1, 1, 2]
    assert [p["paragraph"] for p in paras] == [0, 1, 2, 3]
    table = section_paragraphs(MD_PAGES, "s3")
    assert table[1]["text"].endswith("| Net PPE | 8,738 |") and table[1]["page"] == 2
    # A level-1 section includes its subsections but stops at the next level-1 heading.
    whole = section_paragraphs(MD_PAGES, 1)
    assert whole[0]["text"] == "# Annual Report" and whole[-1]["page"] == 2
    assert all("Exhibit" not in p["text"] for p in whole)


def test_plain_text_uses_item_and_caps_lines():
    pages = [
        "PART II\n\nItem 7. Management's Discussion and Analysis\n\nRevenue grew 5%.",
        "RESULTS OF OPERATIONS\n\nNet income was $4.6 billion.\n\nItem 8. Financial Statements\n\nSee notes.",
    ]
    entries = outline(pages)
    titles = [(e["title"], e["level"]) for e in entries]
    assert titles == [
        ("PART II", 1),
        ("Item 7. Management's Discussion and Analysis", 2),
        ("RESULTS OF OPERATIONS", 3),
        ("Item 8. Financial Statements", 2),
    ]
    paras = section_paragraphs(pages, "item 7")
    assert [p["text"] for p in paras][-1] == "Net income was $4.6 billion."


def test_no_headings_gives_page_pseudo_sections():
    pages = ["just text on page one", "and page two\n\nsecond para"]
    entries = outline(pages)
    assert [e["section"] for e in entries] == ["p1", "p2"]
    assert section_paragraphs(pages, "p2") == [
        {"paragraph": 0, "text": "and page two", "page": 2},
        {"paragraph": 1, "text": "second para", "page": 2},
    ]


def test_corpus_toc_read_section_slices_and_errors():
    corpus = Corpus.from_documents({"report": MD_PAGES})
    assert toc(corpus, "report")[2]["title"] == "Financial Statements"
    assert read_section(corpus, "report", "Risk Factors", start=1, end=3) == [
        {"paragraph": 1, "text": "Risk one.", "page": 1},
        {"paragraph": 2, "text": "Risk two.", "page": 1},
    ]
    assert read_section(corpus, "report", "s4")[-1] == {
        "paragraph": 1,
        "text": "Exhibit list.",
        "page": 3,
    }
    with pytest.raises(CorpusError, match="report.*no section 'nope'"):
        read_section(corpus, "report", "nope")
    with pytest.raises(CorpusError, match="missing"):
        toc(corpus, "missing")


def test_running_page_headers_do_not_cut_a_section_at_the_page_break():
    header = "Table of Contents\nACME INC.\nNOTES TO FINANCIAL STATEMENTS (continued)\n\n"
    pages = [
        header + "NOTE 10 - LEASES\n\nLeases are operating leases.",
        header + "NOTE 11 - INCOME TAXES\n\nThe effective tax rate was 21%.",
        header + "The rate benefited from a settlement.\n\nNOTE 12 - DEBT\n\nNo debt.",
    ]
    entries = outline(pages)
    assert [e["title"] for e in entries] == [
        "NOTE 10 - LEASES",
        "NOTE 11 - INCOME TAXES",
        "NOTE 12 - DEBT",
    ]
    note = next(e for e in entries if e["title"].startswith("NOTE 11"))
    assert (note["page_start"], note["page_end"]) == (2, 3)
    texts = [p["text"] for p in section_paragraphs(pages, "income taxes")]
    assert texts[-1] == "The rate benefited from a settlement."
    assert "No debt." not in texts


def test_toc_skips_sec_cover_page_boilerplate():
    cover = (
        "UNITED STATES\nSECURITIES AND EXCHANGE COMMISSION\nWashington, D.C. 20549\n\nFORM 10-K\n\n"
        "ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d)\n\nACME INC.\n"
    )
    pages = [cover, "PART I\n\nItem 1. Business\n\nWe make widgets."]
    titles = [e["title"] for e in outline(pages)]
    assert titles == ["ACME INC.", "PART I", "Item 1. Business"]


def test_a_group_heading_holds_its_group():
    pages = [
        "## Risk Factors\n\n### Risks Related to Our Business\n\n### We face competition\n\n"
        "Competitors are many.\n\n### We depend on suppliers\n\nSuppliers may fail.",
        "### Risks Related to Regulation\n\n### Laws may change\n\nNew laws may hurt us.",
    ]
    entries = outline(pages)
    group = next(e for e in entries if e["title"] == "Risks Related to Our Business")
    assert (group["page_start"], group["page_end"]) == (1, 1)
    texts = [p["text"] for p in section_paragraphs(pages, "Risks Related to Our Business")]
    assert texts == [
        "### Risks Related to Our Business",
        "### We face competition",
        "Competitors are many.",
        "### We depend on suppliers",
        "Suppliers may fail.",
    ]
    # an ordinary heading still ends at the next heading of its level
    assert [p["text"] for p in section_paragraphs(pages, "We face competition")] == [
        "### We face competition",
        "Competitors are many.",
    ]
    # and the level above holds everything
    assert len(section_paragraphs(pages, "Risk Factors")) == 9


def test_a_slide_deck_without_headings_gets_one_entry_per_titled_part():
    deck = ["Agenda\n1. Results", "Results\nRevenue up", "Results\nMargin up", "Outlook\n2025"]
    entries = outline(deck)
    assert [(e["section"], e["title"], e["page_start"], e["page_end"]) for e in entries] == [
        ("p1", "Agenda", 1, 1),
        ("p2", "Results", 2, 3),
        ("p4", "Outlook", 4, 4),
    ]
    assert [p["text"] for p in section_paragraphs(deck, "Results")] == [
        "Results\nRevenue up",
        "Results\nMargin up",
    ]
    scanned = outline(["", " \n", "x"])  # pages without a text layer: one section
    assert [(e["title"], e["page_start"], e["page_end"]) for e in scanned] == [
        ("(no text)", 1, 2),
        ("x", 3, 3),
    ]


def test_a_heading_repeated_on_the_next_pages_is_one_section():
    deck = ["# Results\nRevenue up", "# Results\nMargin up", "# Outlook\n2025"]
    entries = outline(deck)
    assert [(e["title"], e["page_start"], e["page_end"]) for e in entries] == [
        ("Results", 1, 2),
        ("Outlook", 3, 3),
    ]
    assert [p["page"] for p in section_paragraphs(deck, "Results")] == [1, 2]
