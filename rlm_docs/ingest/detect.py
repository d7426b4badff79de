"""Choose the reader for a source file: `--format` if given, else extension and content.

.pdf                 pdf (Mistral OCR or the pypdf text layer)
.json                OCR response (object with "pages") or page list (JSON list)
.md / .markdown      markdown (form feeds, or --separator)
.txt / .text         marked corpus if it starts with "[FILE:", else pdftotext (form feeds)
"""

import json
from pathlib import Path

from rlm_docs.errors import IngestError
from rlm_docs.ingest.formats import FORMATS
from rlm_docs.ingest.markdown import read_markdown
from rlm_docs.ingest.marked import looks_marked, read_marked
from rlm_docs.ingest.ocr_json import read_ocr_json
from rlm_docs.ingest.page_list import read_page_list
from rlm_docs.ingest.pdf import read_pdf
from rlm_docs.ingest.pdftotext import read_pdftotext
from rlm_docs.ingest.source import Options, ReadResult, decode, locate_replacements

EXTENSIONS = {
    ".pdf": "pdf",
    ".json": "json",
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".text": "text",
}


def supported(path: Path) -> bool:
    return path.suffix.lower() in EXTENSIONS


def _load_json(path: Path, text: str) -> object:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise IngestError(f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise IngestError(f"{path}: JSON nested too deeply to read") from None


def read_source(path: Path, data: bytes, digest: str, options: Options) -> ReadResult:
    """Read one file into documents (IngestError naming the file and page on bad input)."""
    fmt = options.format
    if fmt is not None and fmt not in FORMATS:
        raise IngestError(f"unknown format {fmt!r} (choose from {', '.join(FORMATS)})")
    kind = fmt or EXTENSIONS.get(path.suffix.lower())
    if kind is None:
        raise IngestError(
            f"{path}: unsupported file type {path.suffix or '(none)'!r}; "
            f"use --format {{{','.join(FORMATS)}}}"
        )
    warnings: list[str] = []
    if kind == "pdf":
        return read_pdf(path, data, digest, options.ocr, warnings)
    text, replaced, encoding = decode(path, data, warnings, options.encoding)
    if kind == "text":
        kind = "marked" if looks_marked(text) else "pdftotext"
    if kind in ("json", "ocr", "pages"):
        obj = _load_json(path, text)
        if kind == "json":
            kind = "pages" if isinstance(obj, list) else "ocr"
        reader = read_page_list if kind == "pages" else read_ocr_json
        result = reader(path, obj, warnings)
    elif kind == "markdown":
        result = read_markdown(path, text, options.separator, warnings)
    elif kind == "marked":
        result = read_marked(path, text, warnings)
    else:
        result = read_pdftotext(path, text, warnings)
    if replaced:
        locate_replacements(path, result.documents, warnings)
    result.encoding = encoding
    return result
