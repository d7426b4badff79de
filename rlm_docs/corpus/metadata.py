"""Document metadata given at ingest (`rlm-docs ingest --metadata FILE`).

Data sets ship a `documents.jsonl` with one JSON object per document: FinanceBench rows are keyed
by `doc_name` and carry `company`, `doc_type`, `doc_period`; KG-RAG and MMLongBench rows are
keyed by `document` and carry `company`, `doc_type`, `period`, `period_end`. The whole row is
stored with the document (`DocInfo.meta`), and three fields every reader wants are normalised
from it so code need not know each data set's spelling: `company`, `doc_type` (SEC forms as
`10-K`, `10-Q`, `8-K`) and `period` (a string, `2018` or `2023 Q3`). Search reads the same
fields to tell filings of one company apart (`rlm_docs.corpus.filings`).
"""

import json
import re
from pathlib import Path, PurePath

from rlm_docs.errors import IngestError

NAME_KEYS = ("document", "doc_name")
_FORM = re.compile(r"(10|8|20|6)[-_ ]?([kqf])(?:[-_ ]+(.*))?", re.IGNORECASE)


SOURCE_SUFFIXES = (".pdf", ".txt", ".md", ".json")


def _stem(name: str) -> str:
    """`reports/2023 Q3 AAPL.pdf` → `2023 q3 aapl` (the key a row and a document share); only
    a source file suffix is cut, so `2303.08559v2` stays whole."""
    path = PurePath(name.replace("\\", "/"))
    return (path.stem if path.suffix.lower() in SOURCE_SUFFIXES else path.name).lower()


def read_metadata(path: str | Path) -> dict[str, dict[str, object]]:
    """The rows of a JSONL metadata file by lowercased document stem; IngestError naming the
    file and line for anything that is not one object with a document name per line."""
    file = Path(path)
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise IngestError(f"{file}: cannot read metadata ({reason})") from None
    rows: dict[str, dict[str, object]] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            raise IngestError(f"{file}:{number}: not valid JSON") from None
        if not isinstance(row, dict):
            raise IngestError(f"{file}:{number}: expected a JSON object per line")
        name = next((row[k] for k in NAME_KEYS if isinstance(row.get(k), str) and row[k]), None)
        if name is None:
            raise IngestError(f"{file}:{number}: no 'document' or 'doc_name' field")
        key = _stem(name)
        if key in rows:
            raise IngestError(f"{file}:{number}: second row for document {name!r}")
        rows[key] = row
    return rows


def match_rows(
    names: list[str], rows: dict[str, dict[str, object]]
) -> tuple[dict[str, dict[str, object]], list[str]]:
    """Each document name's row ({} when it has none) and the row keys matching no document."""
    found = {n: rows.get(n.lower(), rows.get(_stem(n), {})) for n in names}
    used = {n.lower() for n in names} | {_stem(n) for n in names}
    return found, [k for k in rows if k not in used]


def normalise(meta: dict[str, object]) -> tuple[str, str, str]:
    """`(company, doc_type, period)` of a metadata row, '' for what it does not say."""
    company = _text(meta.get("company"))
    doc_type = _text(meta.get("doc_type"))
    form = _FORM.fullmatch(doc_type)
    if form:
        rest = (form.group(3) or "").replace("_", " ").strip()
        doc_type = f"{form.group(1)}-{form.group(2).upper()}" + (f" {rest}" if rest else "")
    period = _text(meta.get("period", meta.get("doc_period")))
    return company, doc_type, period


def _text(value: object) -> str:
    if isinstance(value, bool) or value is None or isinstance(value, dict | list):
        return ""
    return str(value).strip()
