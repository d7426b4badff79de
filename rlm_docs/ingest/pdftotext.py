"""`pdftotext` output: one form feed (\\f) after each page.

Page N of the PDF is the N-th \\f-separated chunk. pdftotext ends the last page with a form
feed too, so exactly one trailing \\f at the end of the file does not start a page; empty pages
in the middle are kept so numbering still matches the PDF, and so is a scanned document whose
text is only form feeds (every page empty, with a warning). A file without any form feed is
read as a single page, with a warning.
"""

from pathlib import Path

from rlm_docs.corpus.document import Document
from rlm_docs.ingest.source import ReadResult, document_name, warn_empty_pages


def split_form_feeds(text: str) -> list[str]:
    pages = text.split("\f")
    if len(pages) > 1 and pages[-1].strip() == "":
        pages.pop()
    return pages


def read_pdftotext(path: Path, text: str, warnings: list[str]) -> ReadResult:
    pages = split_form_feeds(text)
    if len(pages) == 1:
        warnings.append(f"{path}: no form feed page breaks; read as one page")
    warn_empty_pages(path, pages, warnings, all_empty_ok="\f" in text)
    return ReadResult([Document(document_name(path), pages, str(path))], "pdftotext", warnings)
