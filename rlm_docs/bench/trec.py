"""The TREC-coarse instance pool OOLONG samples from (`trec_coarse_validated.jsonl`).

Only `input` (the question) and `label` (the gold coarse class) are used, as OOLONG's loader
does. The file is research data with its own licence, so it is read from where the user keeps
it (`--data`, or a data directory: see `rlm_docs.data_sets`) and never copied into the
repository.
"""

import json
from dataclasses import dataclass
from pathlib import Path

from rlm_docs.data_sets import TREC, locate
from rlm_docs.errors import DatasetError
from rlm_docs.jsonl import json_error
from rlm_docs.trec_labels import LABELS


@dataclass(frozen=True, slots=True)
class Instance:
    """One TREC question and its gold coarse label."""

    text: str
    label: str


def load_pool(path: str | Path | None = None) -> list[Instance]:
    """All instances of the file, in file order; DatasetError names the file and line."""
    p = locate(TREC, path)
    pool: list[Instance] = []
    try:
        lines = p.read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{p}: cannot read TREC-coarse file ({exc})") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{p}:{number}: invalid JSON ({json_error(exc)})") from None
        text = row.get("input") if isinstance(row, dict) else None
        label = row.get("label") if isinstance(row, dict) else None
        if not isinstance(text, str) or not text.strip():
            raise DatasetError(f"{p}:{number}: field 'input' must be a non-empty string")
        if label not in LABELS:
            raise DatasetError(f"{p}:{number}: field 'label' must be one of {', '.join(LABELS)}")
        pool.append(Instance(" ".join(text.split()), label))
    if not pool:
        raise DatasetError(f"{p}: no instances")
    return pool
