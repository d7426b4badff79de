"""PDFs: Mistral OCR through the real SDK against a loopback server (cached by content hash,
so a PDF is paid for once), and the offline pypdf fallback."""

from pathlib import Path

import pytest

from rlm_docs.errors import IngestError
from rlm_docs.ingest import ingest
from rlm_docs.ingest.mistral_ocr import cache_file
from tests.fixtures.ingest.pdf import minimal_pdf
from tests.servers.mistral_ocr import OcrServer

KEY = "sk-test-ocr-key-123"
PAGES = ["ACME annual report 2023\nRevenue 12.5 million", "", "Balance sheet\nCash 4.2"]


@pytest.fixture
def pdf(tmp_path: Path) -> Path:
    path = tmp_path / "src" / "acme_2023.pdf"
    path.parent.mkdir()
    path.write_bytes(minimal_pdf(PAGES))
    return path


pytestmark = pytest.mark.usefixtures("rlm_home", "no_ocr_service")


def test_mistral_ocr_once_then_cached(pdf: Path, tmp_path: Path, monkeypatch) -> None:
    from rlm_docs.corpus import Corpus

    with OcrServer(api_key=KEY) as srv:
        monkeypatch.setenv("MISTRAL_API_KEY", KEY)
        monkeypatch.setenv("MISTRAL_BASE_URL", srv.base_url + "/v1")
        report = ingest([pdf], tmp_path / "a", ocr="auto")
        assert len(srv.requests) == 1
        req = srv.requests[0]
        assert req["authorized"] and req["model"] == "mistral-ocr-latest"
        assert req["document_type"] == "document_url"
        corpus = Corpus.load(tmp_path / "a")
        assert corpus.names == ["acme_2023"]
        assert corpus.page("acme_2023", 1) == "OCR: ACME annual report 2023\nRevenue 12.5 million"
        assert corpus.page("acme_2023", 2) == ""
        assert corpus.page("acme_2023", 3) == "OCR: Balance sheet\nCash 4.2"
        assert corpus.manifest["sources"][0]["reader"] == "mistral-ocr"
        assert report.pages == 3
        # A second corpus with the same PDF, and a forced re-read: no new paid call.
        ingest([pdf], tmp_path / "b", ocr="mistral")
        assert len(srv.requests) == 1
    # Even without a key or server, the cached response is used in auto mode.
    monkeypatch.delenv("MISTRAL_API_KEY")
    monkeypatch.setenv("MISTRAL_BASE_URL", "http://127.0.0.1:9")
    ingest([pdf], tmp_path / "c")
    assert Corpus.load(tmp_path / "c").page("acme_2023", 3).startswith("OCR:")
    cached = list((tmp_path / "home" / "ocr").glob("*.json"))
    assert len(cached) == 1
    assert KEY not in cached[0].read_text()


def test_ocr_error_names_file_and_hides_key(pdf: Path, tmp_path: Path, monkeypatch) -> None:
    with OcrServer(api_key="other-key") as srv:
        monkeypatch.setenv("MISTRAL_API_KEY", KEY)
        monkeypatch.setenv("MISTRAL_BASE_URL", srv.base_url)
        with pytest.raises(IngestError, match=r"acme_2023\.pdf: Mistral OCR failed: HTTP 401") as e:
            ingest([pdf], tmp_path / "out", ocr="mistral")
    assert KEY not in str(e.value)
    assert not (tmp_path / "out").exists()
    import hashlib

    assert not cache_file(hashlib.sha256(pdf.read_bytes()).hexdigest()).exists()


def test_mistral_mode_without_key_is_an_error(pdf: Path, tmp_path: Path) -> None:
    with pytest.raises(IngestError, match=r"acme_2023\.pdf: Mistral OCR needs MISTRAL_API_KEY"):
        ingest([pdf], tmp_path / "out", ocr="mistral")


def test_local_fallback_without_key(pdf: Path, tmp_path: Path) -> None:
    from rlm_docs.corpus import Corpus

    report = ingest([pdf], tmp_path / "out")
    corpus = Corpus.load(tmp_path / "out")
    assert corpus.pages("acme_2023", 1, 3) == [
        "ACME annual report 2023\nRevenue 12.5 million\n",
        "",
        "Balance sheet\nCash 4.2\n",
    ]
    assert corpus.manifest["sources"][0]["reader"] == "pypdf"
    assert any("MISTRAL_API_KEY not set" in w for w in report.warnings)
    assert any("acme_2023.pdf: 1 empty page(s) kept: 2" in w for w in report.warnings)


def test_not_a_pdf(tmp_path: Path) -> None:
    bad = tmp_path / "fake.pdf"
    bad.write_bytes(b"hello, not a pdf")
    with pytest.raises(IngestError, match=r"fake\.pdf: not a PDF"):
        ingest([bad], tmp_path / "out", ocr="local")
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4\ngarbage without objects\n")
    with pytest.raises(IngestError, match=r"broken\.pdf"):
        ingest([broken], tmp_path / "out", ocr="local")
