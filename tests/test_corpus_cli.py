"""`rlm-docs corpus info|show|search` through `rlm_docs.cli.main`."""

import json
from pathlib import Path

import pytest

from rlm_docs.cli import main
from rlm_docs.corpus import Corpus


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    docs = {
        "ACME_2022_10K": ["ACME overview", "Net sales were $10 million in 2022."],
        "ACME_2023_10K": ["ACME overview", "Net sales were $12 million in 2023.", "Risks"],
    }
    return Corpus.from_documents(docs).save(tmp_path_factory.mktemp("c") / "store")


def test_info_table_and_json(store: Path, capsys) -> None:
    assert main(["corpus", "info", str(store)]) == 0
    out = capsys.readouterr().out
    assert "ACME_2022_10K" in out and "total (2 documents)" in out
    assert main(["corpus", "info", str(store), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["documents"] == 2 and data["pages"] == 5
    assert data["tokens"] == sum(d["tokens"] for d in data["per_document"]) > 0
    assert data["per_document"][1] == {
        "name": "ACME_2023_10K",
        "num_pages": 3,
        "chars": len("ACME overview") + len("Net sales were $12 million in 2023.") + len("Risks"),
        "tokens": data["per_document"][1]["tokens"],
        "source": "",
        "meta": {},
        "company": "",
        "doc_type": "",
        "period": "",
    }


def test_show_is_case_insensitive(store: Path, capsys) -> None:
    assert main(["corpus", "show", str(store), "acme_2023_10k", "2"]) == 0
    assert capsys.readouterr().out == "Net sales were $12 million in 2023.\n"


def test_show_errors(store: Path, capsys) -> None:
    assert main(["corpus", "show", str(store), "ACME_2023_10K", "9"]) == 2
    assert "has no page 9 (valid pages: 1-3)" in capsys.readouterr().err
    assert main(["corpus", "show", str(store), "ACME_2024_10K", "1"]) == 2
    assert "did you mean 'ACME_2023_10K'" in capsys.readouterr().err
    assert main(["corpus", "info", str(store.parent / "nothing")]) == 2
    assert "rlm-docs corpus info: error:" in capsys.readouterr().err


def test_search(store: Path, capsys) -> None:
    assert main(["corpus", "search", str(store), "ACME net sales 2023", "-k", "1", "--json"]) == 0
    hits = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(h["document"], h["page"]) for h in hits] == [("ACME_2023_10K", 2)]
    assert main(["corpus", "search", str(store), "net sales", "--doc", "acme_2022_10k"]) == 0
    out = capsys.readouterr().out
    assert "1. ACME_2022_10K p.2" in out and "ACME_2023" not in out
    assert main(["corpus", "search", str(store), "zebra"]) == 0
    assert "no matching pages" in capsys.readouterr().out
