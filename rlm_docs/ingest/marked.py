"""The pre-marked corpus text that `Corpus.render()` produces (see `rlm_docs.corpus.render`).

Parsing is exact, so `render(parse(render(c))) == render(c)`: page text is everything between
`[PAGE i]\\n` and the `\\n[END PAGE i]\\n` that is followed by `[PAGE i+1]` (or by
`[END FILE: name]` for the last page), so page text may itself contain marker-like lines.
Blank lines between documents are skipped; anything else out of place is an error naming the
file, the document and the page.
"""

from pathlib import Path

from rlm_docs.corpus.document import Document
from rlm_docs.corpus.render import FILE_HEADER, file_footer
from rlm_docs.errors import IngestError
from rlm_docs.ingest.source import ReadResult

_HEADER = FILE_HEADER


def looks_marked(text: str) -> bool:
    return _HEADER.match(_lf(text.lstrip()[:4096])) is not None


def _lf(text: str) -> str:
    return text.replace("\r\n", "\n")


def parse_marked(path: Path, text: str) -> list[Document]:
    """Documents of a marked corpus string; IngestError naming file, document and page."""
    if not text.endswith("\n"):
        text += "\n"
    docs: list[Document] = []
    pos = 0
    while True:
        while pos < len(text) and text[pos] in "\r\n \t":
            pos += 1
        if pos >= len(text):
            break
        m = _HEADER.match(text, pos)
        if m is None:
            line = text.count("\n", 0, pos) + 1
            raise IngestError(f"{path}: line {line}: expected '[FILE: name | TOTAL PAGES: n]'")
        name, total = m.group(1), int(m.group(2))
        if total == 0:
            raise IngestError(f"{path}: document {name!r} has TOTAL PAGES: 0")
        pos = m.end()
        footer = file_footer(name)
        pages: list[str] = []
        for p in range(1, total + 1):
            marker = f"[PAGE {p}]\n"
            if not text.startswith(marker, pos):
                raise IngestError(f"{path}: document {name!r} page {p}: expected {marker.strip()}")
            start = pos + len(marker)
            end_marker = f"\n[END PAGE {p}]\n"
            after = f"[PAGE {p + 1}]\n" if p < total else footer
            find = start
            while True:
                end = text.find(end_marker, find)
                if end < 0:
                    raise IngestError(
                        f"{path}: document {name!r} page {p}: no {end_marker.strip()} "
                        f"followed by {after.strip()}"
                    )
                if text.startswith(after, end + len(end_marker)):
                    break
                find = end + 1
            pages.append(text[start:end])
            pos = end + len(end_marker)
        if not text.startswith(footer, pos):
            raise IngestError(f"{path}: document {name!r}: expected {footer.strip()}")
        pos += len(footer)
        docs.append(Document(name, pages, str(path)))
    if not docs:
        raise IngestError(f"{path}: no [FILE: ...] documents")
    return docs


def read_marked(path: Path, text: str, warnings: list[str]) -> ReadResult:
    """A marked file; one saved with Windows line endings is read with LF (and said so), since
    its markers would otherwise not match. Exact round trips hold for LF files."""
    if _HEADER.match(text.lstrip()) is None and looks_marked(text):
        text = _lf(text)
        warnings.append(f"{path}: CRLF line endings read as LF")
    return ReadResult(parse_marked(path, text), "marked", warnings)
