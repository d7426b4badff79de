"""The shell examples of docs/ingest.md run as written (`tests/doc_snippets.py`): `scans/` holds
an image-only PDF and `notes/` Windows-1252 text, and each comes out readable."""

import shutil
from pathlib import Path

import pytest

from rlm_docs.corpus import Corpus
from tests.doc_snippets import Environment, Ran, lay_out, run_page
from tests.fixtures.ingest.scan import scanned_pdf


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract not installed")
def test_ingest_guide_commands_run(tmp_path: Path, docs_env: Environment) -> None:
    work = lay_out(tmp_path / "work")
    (work / "scans").mkdir()
    (work / "scans" / "letter.pdf").write_bytes(scanned_pdf(["Dear reader\nTotal 1,250"]))
    (work / "notes").mkdir()
    (work / "notes" / "menu.txt").write_bytes("Café … £100\f".encode("cp1252"))
    expected = iter([("letter", "Total 1,250"), ("menu", "Café … £100")])

    def stored(ran: Ran) -> None:
        doc, text = next(expected)
        assert text in Corpus.load(work / "mystore").page(doc, 1), ran.block.where

    run_page("docs/ingest.md", work, docs_env.env, after=stored)
    assert next(expected, None) is None
