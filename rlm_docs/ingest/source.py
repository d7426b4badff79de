"""What every reader shares: the options, the result type, decoding (a given or detected
encoding, else a replacement count), and warnings that name the file and page."""

import codecs
import re
from dataclasses import dataclass, field
from pathlib import Path

from rlm_docs.corpus.document import Document
from rlm_docs.errors import IngestError
from rlm_docs.ingest.encoding import detect as detect_encoding


@dataclass(frozen=True, slots=True)
class Options:
    """Reader settings; `format=None` detects the format from the extension and content."""

    format: str | None = None
    separator: str | None = None
    ocr: str = "auto"
    encoding: str | None = None  # None: UTF-8, else detected

    def key(self) -> dict:
        """The settings that change what is read (part of the re-ingest cache key; an encoding
        only when one is given, so stores written before `--encoding` existed stay valid)."""
        key: dict = {"format": self.format, "separator": self.separator}
        if self.encoding is not None:
            key["encoding"] = self.encoding
        return key


@dataclass(slots=True)
class ReadResult:
    """Documents read from one source file, the reader that read them and its warnings."""

    documents: list[Document]
    reader: str
    warnings: list[str] = field(default_factory=list)
    encoding: str | None = None  # of a text source (given, UTF-8 or detected); None for PDFs


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


def refuse_binary(path: Path, data: bytes, nul_ok: bool = False) -> None:
    """IngestError naming the file if it is clearly not text: a known binary signature or
    NUL bytes (binary data, or UTF-16 text: read that with `--encoding utf-16`, which sets
    `nul_ok`)."""
    for magic, what in _MAGIC:
        if data.startswith(magic):
            raise IngestError(f"{path}: this is {what}, not text; not ingested")
    if not nul_ok and b"\x00" in data[:_SNIFF_BYTES]:
        raise IngestError(
            f"{path}: contains NUL bytes, so it is binary (or UTF-16 text: pass --encoding "
            "utf-16); not ingested"
        )


def decode(
    path: Path, data: bytes, warnings: list[str], encoding: str | None = None
) -> tuple[str, int, str]:
    """(text, replaced, encoding) of a file. With `encoding` (`--encoding`) the bytes must be
    valid in it. Else UTF-8 (BOM dropped); text that is not UTF-8 is decoded in the encoding
    detected for it (with a warning naming it), and only when none fits are undecodable bytes
    replaced with U+FFFD (counted in `replaced`, and reported). A file with no text at all
    (unless it holds form feeds: pdftotext's output for a scanned document is one empty page
    per form feed), a binary file, or one where more than a fifth of the characters cannot be
    decoded is an error."""
    if not data.strip() and b"\f" not in data:
        raise IngestError(f"{path}: empty file")
    refuse_binary(path, data, nul_ok=encoding is not None)
    if encoding is not None:
        try:
            return data.decode(encoding).removeprefix("\ufeff"), 0, encoding
        except UnicodeDecodeError as exc:
            raise IngestError(
                f"{path}: not valid {encoding} at byte {exc.start} ({exc.reason}); not ingested"
            ) from None
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    try:
        return data.decode("utf-8"), 0, "utf-8"
    except UnicodeDecodeError as exc:
        first = exc.start
    lossy = data.decode("utf-8", errors="replace")
    # Valid multi-byte UTF-8 elsewhere means UTF-8 with a few damaged bytes: decoding it all in
    # a guessed single-byte code page would garble every one of its accented letters.
    utf8_elsewhere = any(c > "\x7f" and c != "\ufffd" for c in lossy)
    guess = None if utf8_elsewhere else detect_encoding(data)
    if guess is not None:
        try:
            text = data.decode(guess)
        except UnicodeDecodeError:
            pass
        else:
            warnings.append(
                f"{path}: not UTF-8 (first at byte {first}); read as {guess}, the encoding "
                "detected (--encoding chooses another)"
            )
            return text, 0, guess
    text = lossy
    bad = text.count("\ufffd") - data.decode("utf-8", errors="ignore").count("\ufffd")
    if bad > _MAX_REPLACED * len(text):
        raise IngestError(
            f"{path}: {bad:,} of {len(text):,} characters are not valid UTF-8 and no other "
            "encoding fits, so this is binary data (or pass --encoding); not ingested"
        )
    warnings.append(
        f"{path}: {bad} undecodable byte sequence(s) replaced with U+FFFD (first at byte {first})"
    )
    return text, bad, "utf-8"


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
