"""Readers on small hand-written fixtures: page numbering, separators, bad input naming the
file and page."""

import json
from pathlib import Path

import pytest

from rlm_docs.corpus import Corpus
from rlm_docs.errors import IngestError
from rlm_docs.ingest import Options, read_source
from rlm_docs.ingest.markdown import split_separator
from rlm_docs.ingest.marked import parse_marked

FIX = Path(__file__).parent / "fixtures" / "ingest"


def read(path: Path, **options):
    return read_source(path, path.read_bytes(), "0" * 64, Options(**options))


def test_ocr_response_pages_tables_inlined() -> None:
    r = read(FIX / "acme_2023.json")
    assert r.reader == "ocr" and r.warnings == []
    (doc,) = r.documents
    assert doc.name == "acme_2023" and len(doc.pages) == 3
    assert doc.pages[0].startswith("# ACME Corp Annual Report 2023")
    assert "![img-0.jpeg](img-0.jpeg)" in doc.pages[0]
    assert "| Cash | 4.2 |" in doc.pages[1] and "[tbl-0.md]" not in doc.pages[1]
    assert doc.pages[2] == "Notes to the financial statements."


def test_ocr_out_of_order_is_sorted_with_warning() -> None:
    r = read(FIX / "out_of_order.json")
    assert r.documents[0].pages == ["first", "second"]
    assert any("out_of_order.json" in w and "out of order" in w for w in r.warnings)


def test_ocr_missing_page_is_an_error_naming_it() -> None:
    with pytest.raises(
        IngestError, match=r"missing_page\.json: OCR response is missing page\(s\) 3"
    ):
        read(FIX / "missing_page.json")


def test_ocr_duplicate_and_bad_pages(tmp_path: Path) -> None:
    dup = tmp_path / "dup.json"
    dup.write_text(
        json.dumps({"pages": [{"index": 0, "markdown": "a"}, {"index": 0, "markdown": "b"}]})
    )
    with pytest.raises(IngestError, match=r"dup\.json: page 1 \(index 0\) appears twice"):
        read(dup)
    nomd = tmp_path / "nomd.json"
    nomd.write_text(json.dumps({"pages": [{"index": 0, "markdown": "a"}, {"index": 1}]}))
    with pytest.raises(IngestError, match=r"nomd\.json: page 2: 'markdown' is missing"):
        read(nomd)


def test_json_that_is_not_an_ocr_response() -> None:
    with pytest.raises(IngestError, match=r"not_ocr\.json: JSON is not a Mistral OCR response"):
        read(FIX / "not_ocr.json")


def test_invalid_json_names_line(tmp_path: Path) -> None:
    bad = tmp_path / "broken.json"
    bad.write_text('{"pages": [\n  {"index": 0,,}\n]}')
    with pytest.raises(IngestError, match=r"broken\.json: invalid JSON at line 2"):
        read(bad)


def test_page_list() -> None:
    r = read(FIX / "brief.pages.json")
    (doc,) = r.documents
    assert doc.name == "brief"  # the .pages infix is not part of the name
    assert doc.pages[2] == "" and len(doc.pages) == 4
    assert any("1 empty page(s) kept: 3" in w for w in r.warnings)


def test_page_list_non_string_names_page() -> None:
    with pytest.raises(IngestError, match=r"bad_page_list\.json: page 2 is int, not a string"):
        read(FIX / "bad_page_list.json")


def test_pdftotext_keeps_middle_empty_page_and_drops_trailing_form_feed() -> None:
    r = read(FIX / "filing.txt")
    assert r.reader == "pdftotext"
    (doc,) = r.documents
    assert doc.pages == [
        "FORM 10-K\n  ACME CORP\n",
        "Item 1. Business\n    We make anvils.\n",
        "",
        "Item 7. MD&A\n    Net sales $1,234\n",
    ]


def test_text_without_form_feeds_is_one_page_with_warning(tmp_path: Path) -> None:
    f = tmp_path / "plain.txt"
    f.write_text("just text\n")
    r = read(f)
    assert r.documents[0].pages == ["just text\n"]
    assert any("plain.txt: no form feed" in w for w in r.warnings)


def test_markdown_dash_separator_rule() -> None:
    r = read(FIX / "report.md", separator="---")
    pages = r.documents[0].pages
    assert len(pages) == 3
    assert "***" in pages[0] and "stays on page 1" in pages[0]  # *** is a rule, not a break
    assert pages[1].startswith("Results\n---\n")  # setext underline is not a break
    assert "|---|---|" in pages[1] and "___" in pages[1]
    assert pages[2] == "# Page 3\n\nOutlook for next year."


def test_markdown_default_splits_form_feeds_only() -> None:
    r = read(FIX / "report_ff.md")
    assert r.documents[0].pages == ["# Page one\n\nText.\n", "# Page two\n\n---\n\nMore text.\n"]
    r = read(FIX / "report.md")
    assert len(r.documents[0].pages) == 1
    assert any("report.md: no form feed" in w and "--separator" in w for w in r.warnings)


def test_markdown_custom_separator_and_edges() -> None:
    text = "<!-- page -->\nA\n<!-- page -->\nB\n<!-- page -->\n"
    assert split_separator(text, "<!-- page -->") == ["A", "B"]
    # A non-thematic separator breaks even directly under text.
    assert split_separator("A\n=== PAGE ===\nB", "=== PAGE ===") == ["A", "B"]


def test_markdown_implausibly_short_pages_warn(tmp_path: Path) -> None:
    body = "\n\n---\n\n".join(["x" * 2000, "y" * 2000, "rule", "z" * 2000])
    f = tmp_path / "rules.md"
    f.write_text(body)
    r = read(f, separator="---")
    assert len(r.documents[0].pages) == 4
    assert any("rules.md: page(s) 3 are much shorter" in w for w in r.warnings)
    r = read(f, separator="+++")
    assert any("separator '+++' not found" in w for w in r.warnings)


def test_marked_corpus_parse_and_round_trip() -> None:
    r = read(FIX / "corpus_marked.txt")
    assert r.reader == "marked"
    alpha, beta = r.documents
    assert alpha.name == "alpha" and beta.name == "Beta Report"
    assert alpha.pages == ["Alpha page one.\nA line that says [END PAGE 1] in the middle.", ""]
    assert beta.pages == ["Beta only page."]
    text = (FIX / "corpus_marked.txt").read_text()
    rendered = Corpus.from_documents(r.documents).render()
    assert rendered == text
    assert Corpus.from_documents(parse_marked(Path("x"), rendered)).render() == rendered


def test_marked_corpus_saved_with_windows_line_endings(tmp_path: Path) -> None:
    lf = (FIX / "corpus_marked.txt").read_bytes()
    crlf = tmp_path / "corpus_crlf.txt"
    crlf.write_bytes(lf.replace(b"\n", b"\r\n"))
    r = read(crlf)
    assert r.reader == "marked"
    assert [d.pages for d in r.documents] == [
        d.pages for d in read(FIX / "corpus_marked.txt").documents
    ]
    assert any("corpus_crlf.txt: CRLF line endings read as LF" in w for w in r.warnings)


def test_marked_round_trip_with_tricky_pages() -> None:
    docs = {
        "d1": ["[PAGE 2]\nfake marker", "\n\nleading and trailing newlines\n\n", "[END PAGE 3]"],
        "d2": ["[END FILE: d2]\n", "x\n[END PAGE 2]\n[PAGE 3]\ny"],
    }
    rendered = Corpus.from_documents(docs).render()
    parsed = parse_marked(Path("t.txt"), rendered)
    assert {d.name: d.pages for d in parsed} == docs
    assert Corpus.from_documents(parsed).render() == rendered


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "[FILE: a | TOTAL PAGES: 2]\n[PAGE 1]\nx\n[END PAGE 1]\n[END FILE: a]\n",
            "'a' page 1: no",
        ),
        (
            "[FILE: a | TOTAL PAGES: 1]\n[PAGE 2]\nx\n[END PAGE 2]\n[END FILE: a]\n",
            "'a' page 1: expected",
        ),
        (
            "[FILE: a | TOTAL PAGES: 1]\n[PAGE 1]\nx\n[END PAGE 1]\n[END FILE: a]\ngarbage\n",
            "line 6",
        ),
        ("[FILE: a | TOTAL PAGES: 0]\n[END FILE: a]\n", "TOTAL PAGES: 0"),
    ],
)
def test_marked_errors_name_file_document_and_page(text: str, message: str) -> None:
    with pytest.raises(IngestError, match=rf"m\.txt: .*{message}"):
        parse_marked(Path("m.txt"), text)


def test_empty_file_is_an_error(tmp_path: Path) -> None:
    for name in ("empty.txt", "blank.md", "e.json"):
        f = tmp_path / name
        f.write_text("  \n" if name == "blank.md" else "")
        with pytest.raises(IngestError, match=rf"{name}: empty file"):
            read(f)


def test_undecodable_bytes_in_utf8_text_are_replaced_and_reported(tmp_path: Path) -> None:
    f = tmp_path / "damaged.txt"
    f.write_bytes(b"page one\f" + b"caf\xe9 cr\xc3\xa8me\f")  # UTF-8, one byte lost
    r = read(f)
    assert r.documents[0].pages == ["page one", "caf\ufffd crème"] and r.encoding == "utf-8"
    assert any("damaged.txt: 1 undecodable byte sequence(s)" in w for w in r.warnings)
    assert any("damaged.txt: replacement characters on page(s) 2" in w for w in r.warnings)


def test_all_empty_pages_is_an_error(tmp_path: Path) -> None:
    f = tmp_path / "blank.pages.json"
    f.write_text('["", "  "]')
    with pytest.raises(IngestError, match=r"blank\.pages\.json: all 2 page\(s\) are empty"):
        read(f)


def test_unsupported_extension_and_forced_format(tmp_path: Path) -> None:
    f = tmp_path / "notes.rst"
    f.write_text("a\fb\f")
    with pytest.raises(IngestError, match=r"notes\.rst: unsupported file type '.rst'.*--format"):
        read(f)
    assert read(f, format="pdftotext").documents[0].pages == ["a", "b"]
    g = tmp_path / "list.txt"
    g.write_text('["p1", "p2"]')
    assert read(g, format="pages").documents[0].pages == ["p1", "p2"]
