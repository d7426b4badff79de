"""Document metadata at ingest (`--metadata FILE`): rows matched to documents, stored, exposed
as `DocInfo.meta` with normalised company/doc_type/period; old stores without it still load."""

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from rlm_docs.cli import main
from rlm_docs.corpus import Corpus
from rlm_docs.corpus.metadata import normalise, read_metadata
from rlm_docs.errors import IngestError
from rlm_docs.ingest import ingest


def _write(path: Path, rows: list[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture()
def src(tmp_path: Path) -> Path:
    d = tmp_path / "src"
    d.mkdir()
    (d / "ACME_2018_10K.txt").write_text("Annual report\fBalance sheet\f")
    (d / "2023 Q3 GLOBEX.txt").write_text("Quarterly report\fNotes\f")
    (d / "2303.08559v2.txt").write_text("A paper about retrieval\fReferences\f")
    return d


ROWS = [
    {"doc_name": "ACME_2018_10K", "company": "Acme", "doc_type": "10k", "doc_period": 2018},
    {
        "document": "2023 Q3 GLOBEX",
        "company": "Globex Inc.",
        "doc_type": "10-Q",
        "period": "2023 Q3",
        "period_end": "September 30, 2023",
    },
    {"document": "2303.08559v2", "doc_type": "Academic paper", "pages": 1},
]


def test_metadata_round_trip_and_normalised_fields(src: Path, tmp_path: Path) -> None:
    meta = _write(tmp_path / "documents.jsonl", ROWS)
    report = ingest([src], tmp_path / "store", metadata=meta)
    assert report.warnings == []
    docs = {d.name: d for d in Corpus.load(tmp_path / "store").documents}
    acme, globex, paper = docs["ACME_2018_10K"], docs["2023 Q3 GLOBEX"], docs["2303.08559v2"]
    assert acme.meta == ROWS[0]
    assert (acme.company, acme.doc_type, acme.period) == ("Acme", "10-K", "2018")
    assert (globex.company, globex.doc_type, globex.period) == ("Globex Inc.", "10-Q", "2023 Q3")
    assert globex.meta["period_end"] == "September 30, 2023"
    assert (paper.company, paper.doc_type, paper.period) == ("", "Academic paper", "")
    assert docs["ACME_2018_10K"].to_dict()["meta"]["doc_period"] == 2018


def test_reingest_keeps_or_replaces_metadata(src: Path, tmp_path: Path) -> None:
    out = tmp_path / "store"
    meta = _write(tmp_path / "documents.jsonl", ROWS)
    ingest([src], out, metadata=meta)
    assert not ingest([src], out, metadata=meta).written  # nothing changed
    assert not ingest([src], out).written  # no file given: the stored metadata stays
    assert Corpus.load(out).documents[0].meta != {}
    _write(meta, [{**ROWS[0], "company": "Acme Corp"}])
    report = ingest([src], out, metadata=meta)
    assert report.written and report.skipped == 3
    docs = {d.name: d for d in Corpus.load(out).documents}
    assert docs["ACME_2018_10K"].company == "Acme Corp"
    assert docs["2023 Q3 GLOBEX"].meta == {}
    assert any("no metadata row for 2 document(s)" in w for w in report.warnings)


def test_rows_naming_no_document_are_reported(src: Path, tmp_path: Path) -> None:
    meta = _write(tmp_path / "m.jsonl", [*ROWS, {"document": "MISSING.pdf", "company": "X"}])
    report = ingest([src], tmp_path / "store", metadata=meta)
    assert report.warnings == [
        f"{meta}: 1 metadata row(s) name no ingested document (e.g. 'missing')"
    ]


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"document": "A"}', "{not json"], r"m.jsonl:2: not valid JSON"),
        (['["A"]'], r"m.jsonl:1: expected a JSON object per line"),
        (['{"company": "Acme"}'], r"m.jsonl:1: no 'document' or 'doc_name' field"),
        (['{"document": "A.pdf"}', '{"doc_name": "a"}'], r"m.jsonl:2: second row for document 'a'"),
    ],
)
def test_bad_metadata_names_file_and_line(tmp_path: Path, lines: list[str], message: str) -> None:
    path = tmp_path / "m.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(IngestError, match=message):
        read_metadata(path)


def test_cli_metadata_errors_exit_2_before_writing(src: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "store"
    (tmp_path / "bad.jsonl").write_text("{oops\n")
    assert (
        main(["ingest", str(src), "--out", str(out), "--metadata", str(tmp_path / "bad.jsonl")])
        == 2
    )
    err = capsys.readouterr().err
    assert err.startswith("rlm-docs ingest: error: ") and "bad.jsonl:1" in err
    assert len(err.strip().splitlines()) == 1 and not out.exists()
    missing = str(tmp_path / "nope.jsonl")
    assert main(["ingest", str(src), "--out", str(out), "--metadata", missing]) == 2
    assert "nope.jsonl: cannot read metadata" in capsys.readouterr().err


def test_store_written_before_metadata_still_loads(src: Path, tmp_path: Path) -> None:
    out = tmp_path / "store"
    ingest([src], out, metadata=_write(tmp_path / "m.jsonl", ROWS))
    table = pq.read_table(out / "documents.parquet")
    pq.write_table(table.drop_columns(["meta"]), out / "documents.parquet")
    corpus = Corpus.load(out)
    assert [d.meta for d in corpus.documents] == [{}, {}, {}]
    assert corpus.documents[0].company == "" and corpus.search("retrieval")[0].page == 1


def test_normalise_spellings() -> None:
    assert normalise({"doc_type": "10k_annualreport", "doc_period": 2022}) == (
        "",
        "10-K annualreport",
        "2022",
    )
    assert normalise({"doc_type": "8-k", "company": " Amcor "}) == ("Amcor", "8-K", "")
    assert normalise({"doc_type": "Earnings", "period": None, "company": ["x"]}) == (
        "",
        "Earnings",
        "",
    )
