"""Reading JSONL files written by rlm-docs (results, predictions, trajectories) strictly.

Bad input is a `DatasetError` naming the file and line, never a traceback (JSON nested deeper
than Python's decoder can recurse included). `torn_tail_ok` drops
an unparsable last line with no newline, which an eval run that is still writing (or was killed
mid-write) leaves behind; `--resume` re-runs that question.
"""

import json
from pathlib import Path
from typing import Any

from rlm_docs.errors import DatasetError


def json_error(exc: json.JSONDecodeError) -> str:
    """A JSON syntax error as a whole phrase: `json` ends some messages with a dangling "at"
    ("Unterminated string starting at") that its own `str()` completes with the position."""
    return f"{exc.msg.removesuffix(' at')} at column {exc.colno}"


def read_jsonl(path: Path, *, torn_tail_ok: bool = False) -> list[dict[str, Any]]:
    """Objects of a JSONL file (see the module docstring)."""
    return [record for _, record in numbered_jsonl(path, torn_tail_ok=torn_tail_ok)]


def numbered_jsonl(path: Path, *, torn_tail_ok: bool = False) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) of every record of a JSONL file (see `read_jsonl`)."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")  # an editor's BOM is not JSON
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot read ({exc})") from None
    records = []
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            if torn_tail_ok and number == len(lines) and not text.endswith("\n"):
                break
            raise DatasetError(f"{path}:{number}: invalid JSON ({json_error(exc)})") from None
        except RecursionError:
            raise DatasetError(f"{path}:{number}: JSON nested too deeply to read") from None
        if not isinstance(record, dict):
            raise DatasetError(f"{path}:{number}: expected a JSON object")
        records.append((number, record))
    return records
