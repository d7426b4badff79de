"""Where research data sets live: files with their own licences that are never shipped in the
package, so they are found by name in a data directory rather than relative to the code.

A data directory holds each set under its name (`oolong-trec/trec_coarse_validated.jsonl`,
`financebench/`). Searched in order: `$RLM_DOCS_DATA`, then, in a source checkout only,
`../shared/datasets` beside it (the development machines' layout). After a plain `pip install`
there is no checkout, so the error says which paths were tried and where the file comes from.
"""

import os
from dataclasses import dataclass
from pathlib import Path

from rlm_docs.errors import DatasetError

ENV = "RLM_DOCS_DATA"


@dataclass(frozen=True, slots=True)
class DataSet:
    """A data set: its path inside a data directory, what it is and where to get it."""

    name: str
    title: str
    origin: str


TREC = DataSet(
    "oolong-trec/trec_coarse_validated.jsonl",
    "TREC-coarse file",
    "the OOLONG repository (github.com/abertsch72/oolong, MIT): "
    "src/data_gen/oolong-synth/validated_data/trec_coarse_validated.jsonl",
)
FINANCEBENCH = DataSet(
    "financebench",
    "FinanceBench directory",
    "FinanceBench (github.com/patronus-ai/financebench, CC-BY-NC-4.0), laid out as "
    "markdown/*.pages.json and questions.dev.jsonl",
)


def data_dirs() -> list[Path]:
    """The directories searched, in order."""
    dirs = []
    if os.environ.get(ENV, "").strip():
        dirs.append(Path(os.environ[ENV].strip()).expanduser())
    checkout = Path(__file__).resolve().parents[1]
    if (checkout / "pyproject.toml").is_file():  # an editable install, not site-packages
        dirs.append(checkout.parent / "shared" / "datasets")
    return dirs


def find(data_set: DataSet) -> Path | None:
    """The data set's path in the first data directory that has it, or None."""
    for directory in data_dirs():
        path = directory / data_set.name
        if path.exists():
            return path
    return None


def locate(data_set: DataSet, given: str | Path | None = None, flag: str = "--data") -> Path:
    """`given` if it exists, else `find`; DatasetError naming the paths tried, the flag and
    the environment variable that point elsewhere, and where the data comes from."""
    if given is not None:
        path = Path(given)
        if not path.exists():
            raise DatasetError(f"{path}: {data_set.title} not found")
        return path
    found = find(data_set)
    if found is not None:
        return found
    tried = ", ".join(str(d / data_set.name) for d in data_dirs()) or f"{ENV} is not set"
    raise DatasetError(
        f"{data_set.title} not found ({tried}); get it from {data_set.origin}, then pass "
        f"{flag} PATH or set {ENV}=DIR with DIR/{data_set.name}"
    )
