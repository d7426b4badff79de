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


def decode(path: Path, data: bytes, warnings: list[str]) -> tuple[str, int]:
    """UTF-8 text of a file (BOM dropped) and how many undecodable bytes were replaced with
    U+FFFD (reported as a warning). A file with no text at all is an error."""
    if not data.strip():
        raise IngestError(f"{path}: empty file")
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    try:
        return data.decode("utf-8"), 0
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        bad = text.count("\ufffd") - data.decode("utf-8", errors="ignore").count("\ufffd")
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


def warn_empty_pages(path: Path, pages: list[str], warnings: list[str]) -> None:
    """Empty pages are kept (numbering must match the original) but reported."""
    empty = [str(i) for i, p in enumerate(pages, 1) if _BLANKISH.fullmatch(p)]
    if empty and len(empty) < len(pages):
        shown = ", ".join(empty[:10]) + (", …" if len(empty) > 10 else "")
        warnings.append(f"{path}: {len(empty)} empty page(s) kept: {shown}")
    elif empty:
        raise IngestError(f"{path}: all {len(pages)} page(s) are empty")
