"""What every reader shares: the options, the result type, decoding with a replacement count,
and warnings that name the file and page."""

import codecs
import re
from dataclasses import dataclass, field
from pathlib import Path

from rlm_docs.corpus.document import Document
from rlm_docs.errors import IngestError


@dataclass(frozen=True, slots=True)
class Options:
    """Reader settings; `format=None` detects the format from the extension and content."""

    format: str | None = None
    separator: str | None = None
    ocr: str = "auto"

    def key(self) -> dict:
        """The settings that change what is read (part of the re-ingest cache key)."""
        return {"format": self.format, "separator": self.separator}


@dataclass(slots=True)
class ReadResult:
    """Documents read from one source file, the reader that read them and its warnings."""

    documents: list[Document]
    reader: str
    warnings: list[str] = field(default_factory=list)


def document_name(path: Path) -> str:
    """A document's name: the file stem, minus a `.pages`/`.ocr` infix (`X.pages.json` → X)."""
    stem = path.stem
    for suffix in (".pages", ".ocr"):
        if stem.endswith(suffix):
            return stem[: -len(suffix)]
    return stem


# File signatures of formats that are never text (a PNG renamed .txt must not become hundreds
# of pages of garbage).
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"II*\x00", "a TIFF image"),
    (b"MM\x00*", "a TIFF image"),
    (b"\x1f\x8b", "gzip-compressed data"),
    (b"BZh", "bzip2-compressed data"),
    (b"\xfd7zXZ\x00", "xz-compressed data"),
    (b"(\xb5/\xfd", "zstd-compressed data"),
    (b"PK\x03\x04", "a zip archive (or .docx/.xlsx/.epub)"),
    (b"7z\xbc\xaf\x27\x1c", "a 7z archive"),
    (b"%PDF-", "a PDF (name it .pdf or pass --format pdf)"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an old Microsoft Office file"),
    (b"\x7fELF", "an executable"),
    (b"SQLite format 3\x00", "an SQLite database"),
    (b"PAR1", "a Parquet file"),
)
_SNIFF_BYTES = 8000  # like git: a NUL byte in the first 8000 bytes means binary
_MAX_REPLACED = 0.2  # a larger share of undecodable characters is not text worth reading


def refuse_binary(path: Path, data: bytes) -> None:
    """IngestError naming the file if it is clearly not text: a known binary signature or
    NUL bytes (binary data, or UTF-16 text, which must be converted to UTF-8 first)."""
    for magic, what in _MAGIC:
        if data.startswith(magic):
            raise IngestError(f"{path}: this is {what}, not text; not ingested")
    if b"\x00" in data[:_SNIFF_BYTES]:
        raise IngestError(
            f"{path}: contains NUL bytes, so it is binary (or UTF-16 text: convert it to UTF-8); "
            "not ingested"
        )


def decode(path: Path, data: bytes, warnings: list[str]) -> tuple[str, int]:
    """UTF-8 text of a file (BOM dropped) and how many undecodable bytes were replaced with
    U+FFFD (reported as a warning). A file with no text at all (unless it holds form feeds:
    pdftotext's output for a scanned document is one empty page per form feed), a binary file, or
    one where more than a fifth of the characters cannot be decoded is an error."""
    if not data.strip() and b"\f" not in data:
        raise IngestError(f"{path}: empty file")
    refuse_binary(path, data)
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    try:
        return data.decode("utf-8"), 0
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        bad = text.count("\ufffd") - data.decode("utf-8", errors="ignore").count("\ufffd")
        if bad > _MAX_REPLACED * len(text):
            raise IngestError(
                f"{path}: {bad:,} of {len(text):,} characters are not valid UTF-8, so this is "
                "binary data or text in another encoding (convert it to UTF-8); not ingested"
            ) from None
        warnings.append(
            f"{path}: {bad} undecodable byte sequence(s) replaced with U+FFFD "
            f"(first at byte {exc.start})"
        )
        return text, bad


def locate_replacements(path: Path, docs: list[Document], warnings: list[str]) -> None:
    """Name the pages that hold U+FFFD after a lossy decode."""
    single = len(docs) == 1
    pages = [
        str(i) if single else f"{d.name} p.{i}"
        for d in docs
        for i, p in enumerate(d.pages, 1)
        if "\ufffd" in p
    ]
    if pages:
        where = ", ".join(pages[:10]) + (", …" if len(pages) > 10 else "")
        warnings.append(f"{path}: replacement characters on page(s) {where}")


def page_list(path: Path, texts: list[str]) -> list[str]:
    """Check that every page is a string; name the first page that is not."""
    for i, t in enumerate(texts, 1):
        if not isinstance(t, str):
            raise IngestError(f"{path}: page {i} is {type(t).__name__}, not a string")
    if not texts:
        raise IngestError(f"{path}: no pages")
    return texts


_BLANKISH = re.compile(r"\s*")


def warn_empty_pages(
    path: Path, pages: list[str], warnings: list[str], all_empty_ok: bool = False
) -> None:
    """Empty pages are kept (numbering must match the original) but reported. A document with
    no text at all is an error, unless `all_empty_ok` (pdftotext output of a scanned document,
    whose page count questions still refer to): then it is kept, with a warning."""
    empty = [str(i) for i, p in enumerate(pages, 1) if _BLANKISH.fullmatch(p)]
    if empty and len(empty) < len(pages):
        shown = ", ".join(empty[:10]) + (", …" if len(empty) > 10 else "")
        warnings.append(f"{path}: {len(empty)} empty page(s) kept: {shown}")
    elif empty and all_empty_ok:
        warnings.append(
            f"{path}: all {len(pages)} page(s) are empty (no text layer: a scanned document "
            "needs OCR); kept so page numbers match"
        )
    elif empty:
        raise IngestError(f"{path}: all {len(pages)} page(s) are empty")
