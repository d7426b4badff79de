"""Question fields and `--where FIELD=VALUE` filters over a question set.

Real data sets carry their own fields (MMLongBench-Doc: `text_answerable`,
`evidence_pages_have_text`, `doc_type`; KG-RAG: `source_chunk_type`), and the useful subsets
are defined by them (e.g. the text-only subset `text_answerable=true`). A question's fields are
its scalar fields: `question_type`, `domain`, `hop_type` and every scalar extra field of its
record. Values in a filter are read as JSON scalars when they parse as one (`true`, `3`,
`null`), else as strings; strings match case-insensitively.
"""

import json
from collections.abc import Iterable, Mapping
from typing import Any

from rlm_docs.errors import ConfigError
from rlm_docs.questions import Question

Scalar = str | int | float | bool | None


def question_fields(q: Question) -> dict[str, Scalar]:
    """The scalar fields of `q` that filters and per-field report tables can use."""
    extra = {
        k: v for k, v in q.extra.items() if v is None or isinstance(v, str | int | float | bool)
    }
    return extra | {"question_type": q.question_type, "domain": q.domain, "hop_type": q.hop_type}


def parse_value(text: str) -> Scalar:
    """`true`/`false`/`null`/numbers as JSON scalars; anything else as the string itself."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return text
    return value if value is None or isinstance(value, str | int | float | bool) else text


def parse_where(clauses: Iterable[str]) -> list[tuple[str, Scalar]]:
    """`FIELD=VALUE` clauses as (field, value); ConfigError naming a malformed clause."""
    out = []
    for clause in clauses:
        name, sep, value = clause.partition("=")
        if not sep or not name.strip():
            raise ConfigError(
                f"--where {clause!r}: expected FIELD=VALUE, e.g. text_answerable=true"
            )
        out.append((name.strip(), parse_value(value.strip())))
    return out


def matches(actual: Scalar, wanted: Scalar) -> bool:
    """Equality of field values, with strings compared case-insensitively and `1` never `True`."""
    if isinstance(actual, bool) or isinstance(wanted, bool):
        return isinstance(actual, bool) and isinstance(wanted, bool) and actual is wanted
    if isinstance(actual, str) and isinstance(wanted, str):
        return actual.casefold() == wanted.casefold()
    if isinstance(actual, str) or isinstance(wanted, str):
        return str(actual) == str(wanted)
    return actual == wanted


def filter_questions(questions: list[Question], clauses: Iterable[str]) -> list[Question]:
    """The questions matching every clause (in file order). A field no question has, or a
    filter that leaves no question, is a ConfigError naming the field and the known ones."""
    conditions = parse_where(clauses)
    if not conditions:
        return questions
    fields = [question_fields(q) for q in questions]
    known = sorted({name for f in fields for name in f})
    for name, _ in conditions:
        if name not in known:
            raise ConfigError(
                f"--where {name}: unknown question field; fields of this data set: "
                + ", ".join(known)
            )
    kept = [
        q
        for q, f in zip(questions, fields, strict=True)
        if all(name in f and matches(f[name], value) for name, value in conditions)
    ]
    if not kept:
        shown = " ".join(f"{n}={json.dumps(v)}" for n, v in conditions)
        raise ConfigError(f"--where {shown}: no question of the data set matches")
    return kept


def row_field(row: Mapping[str, Any], name: str) -> Any:
    """A result row's value of question field `name` (top-level, else under `fields`)."""
    if name in row:
        return row[name]
    return (row.get("fields") or {}).get(name)
