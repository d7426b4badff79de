"""Scanned PDFs read on this machine: Tesseract OCRs the pages that have no text layer, with
`--ocr local` and with `--ocr auto` when no Mistral key is set; results are cached beside Mistral
OCR's; without Tesseract the errors name a way out that works (no advice loop)."""

import io
import shutil
from pathlib import Path

import pytest
from pypdf import PdfReader, PdfWriter

from rlm_docs.cli import main
from rlm_docs.corpus import Corpus
from rlm_docs.errors import IngestError
from rlm_docs.ingest import ingest
from tests.fixtures.ingest.pdf import minimal_pdf
from tests.fixtures.ingest.scan import scanned_pdf

needs_tesseract = pytest.mark.skipif(
    shutil.which("tesseract") is None,
    reason="tesseract not installed (apt-get install tesseract-ocr; .ci/run installs it)",
)
SCANNED = ["ACME scanned report 2023\nRevenue 12.5 million", "Balance sheet\nCash 4.2 million"]


pytestmark = pytest.mark.usefixtures("rlm_home", "no_ocr_service")


@pytest.fixture(autouse=True)
def _default_language(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RLM_DOCS_OCR_LANG", raising=False)


@pytest.fixture
def scan(tmp_path: Path) -> Path:
    path = tmp_path / "src" / "acme_scan.pdf"
    path.parent.mkdir()
    path.write_bytes(scanned_pdf(SCANNED))
    assert not any(p.extract_text().strip() for p in PdfReader(path).pages)  # image-only
    return path


def _no_tesseract(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir(exist_ok=True)
    monkeypatch.setenv("PATH", str(empty))


@needs_tesseract
@pytest.mark.parametrize("mode", ["local", "auto"])
def test_scanned_pdf_is_ocrd_locally_and_cached(scan, tmp_path, rlm_home, monkeypatch, mode):
    report = ingest([scan], tmp_path / "store", ocr=mode)
    corpus = Corpus.load(tmp_path / "store")
    assert "Revenue 12.5 million" in corpus.page("acme_scan", 1)
    assert "Cash 4.2 million" in corpus.page("acme_scan", 2)
    assert corpus.manifest["sources"][0]["reader"] == "pypdf+tesseract"
    assert report.pages == 2
    [cached] = (rlm_home / "ocr").glob("*.tesseract-eng.json")
    assert "Revenue 12.5 million" in cached.read_text(encoding="utf-8")
    _no_tesseract(tmp_path, monkeypatch)  # the cache is enough now, in any store
    ingest([scan], tmp_path / "again", ocr="local")
    assert Corpus.load(tmp_path / "again").page("acme_scan", 1) == corpus.page("acme_scan", 1)


@needs_tesseract
def test_only_pages_without_a_text_layer_are_ocrd(tmp_path):
    writer = PdfWriter()
    for data in (minimal_pdf(["Born digital page\nExact text 7.25"]), scanned_pdf(SCANNED[1:])):
        writer.append(PdfReader(io.BytesIO(data)))
    mixed = tmp_path / "mixed.pdf"
    with mixed.open("wb") as fh:
        writer.write(fh)
    ingest([mixed], tmp_path / "store", ocr="local")
    corpus = Corpus.load(tmp_path / "store")
    assert corpus.page("mixed", 1) == "Born digital page\nExact text 7.25\n"  # pypdf, as is
    assert "Cash 4.2 million" in corpus.page("mixed", 2)


def test_without_tesseract_the_advice_does_not_loop(scan, tmp_path, monkeypatch, capsys):
    _no_tesseract(tmp_path, monkeypatch)
    assert main(["ingest", str(scan), "--out", str(tmp_path / "s"), "--ocr", "local"]) == 2
    local = capsys.readouterr().err.strip()
    assert local == (
        f"rlm-docs ingest: error: {scan}: none of its 2 page(s) has a text layer (a scanned or "
        "image-only PDF); install Tesseract: apt-get install tesseract-ocr for --ocr local, or "
        "use --ocr mistral (needs MISTRAL_API_KEY)"
    )
    with pytest.raises(IngestError, match=r"needs MISTRAL_API_KEY \(or use --ocr local: Tess"):
        ingest([scan], tmp_path / "s", ocr="mistral")
    assert not (tmp_path / "s").exists()


def test_without_tesseract_scanned_pages_of_a_mixed_pdf_are_named(tmp_path, monkeypatch):
    _no_tesseract(tmp_path, monkeypatch)
    pdf = tmp_path / "part.pdf"
    pdf.write_bytes(minimal_pdf(["Some text", ""]))
    report = ingest([pdf], tmp_path / "s", ocr="local")
    assert any(
        "1 page(s) without a text layer not OCR'd (install Tesseract" in w for w in report.warnings
    )
