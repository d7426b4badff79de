"""`rlm-docs data get`: MADQA from (a local copy of) the hub into a store and a question file.

The copy is laid out as the hub serves the repositories (`tests/hub_fixture.py`) and is read
through `datasets` itself, with the hub switched off (`HF_HUB_OFFLINE=1`), so nothing here can
reach the internet.
"""

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

pytest.importorskip("datasets", reason="the `hub` extra (datasets) is not installed")

from rlm_docs import Corpus  # noqa: E402
from rlm_docs.hub.madqa import split_pages  # noqa: E402
from tests.hub_fixture import (  # noqa: E402
    MMLONGBENCH_SCHEMA,
    OOLONG_SCHEMA,
    demo_documents,
    oolong_windows,
    write_financebench_mirror,
    write_madqa_mirror,
    write_mmlongbench_mirror,
    write_oolong_mirror,
)

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def mirror(tmp_path_factory) -> Path:
    return write_madqa_mirror(tmp_path_factory.mktemp("mirror"))


def _env(tmp_path: Path) -> dict[str, str]:
    import os

    env = dict(os.environ)
    env.pop("RLM_DOCS_HUB_MIRROR", None)
    env.update(
        HF_HOME=str(tmp_path / "hf"),
        HF_HUB_OFFLINE="1",
        RLM_DOCS_HOME=str(tmp_path / "home"),
    )
    return env


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rlm_docs", *args],
        cwd=ROOT,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_split_pages_follows_the_official_baseline():
    # The baseline cut on "\n---\n" and stripped each page; a table rule `|---|` or a `---`
    # glued to text is not a break.
    text = "# Title\nintro\n---\n\n|a|b|\n|---|---|\n|1|2|\n---\nlast ---\n"
    assert split_pages(text) == ["# Title\nintro", "|a|b|\n|---|---|\n|1|2|", "last ---"]


def test_data_get_then_eval_end_to_end(mirror, tmp_path):
    out = tmp_path / "madqa"
    got = _cli(tmp_path, "data", "get", "madqa", "--limit", "20", "--out", str(out),
               "--mirror", str(mirror), "--json")  # fmt: skip
    assert got.returncode == 0, got.stderr
    summary = json.loads(got.stdout)
    assert summary["questions"] == 20 and summary["documents"] == 3
    assert summary["page_count_warnings"] == [] and summary["missing_evidence_documents"] == []

    lines = [json.loads(x) for x in (out / "questions.jsonl").read_text().splitlines()]
    assert [q["id"] for q in lines[:2]] == ["demo-01-0", "demo-02-0"] and len(lines) == 20
    first = lines[0]
    assert first["evidence"][0] == {"document": "3M_2018_10K.pdf", "page": 56}
    assert first["answer_variants"][1] == ["32,765"]
    assert first["document_category"] == "Financial report"

    corpus = Corpus.load(out / "corpus")
    demo = demo_documents()
    assert corpus.names == [f"{name}.pdf" for name in demo]
    for name, pages in demo.items():  # every page back where the markdown had it
        assert corpus.num_pages(f"{name}.pdf") == len(pages)
        assert corpus.page(f"{name}.pdf", 56 if name.startswith("3M") else 2) == (
            pages[55 if name.startswith("3M") else 1].strip()
        )

    run = tmp_path / "run"
    ev = _cli(tmp_path, "eval", "--dataset", str(out / "questions.jsonl"), "--corpus",
              str(out / "corpus"), "--system", "rlm", "--model", "offline", "--out", str(run),
              "--no-progress", "--workers", "2")  # fmt: skip
    assert ev.returncode == 0, ev.stderr
    assert "missing 0" in ev.stdout and "failed 0" in ev.stdout
    results = [json.loads(x) for x in (run / "results.jsonl").read_text().splitlines()]
    assert len(results) == 20
    # the offline model cites the documents by their MADQA names, and they match the evidence
    assert all(r["doc_f1"] == 1.0 for r in results)
    assert sum(bool(r["correct"]) for r in results) >= 5


def test_test_split_without_answers_is_one_line(mirror, tmp_path):
    got = _cli(tmp_path, "data", "get", "madqa", "--split", "test", "--out",
               str(tmp_path / "t"), "--mirror", str(mirror))  # fmt: skip
    assert got.returncode == 2
    assert got.stderr.strip().splitlines()[-1] == (
        "rlm-docs data get: error: OxRML/MADQA test row 1: no 'answer_variants' (the public "
        "test split has no answers; use --split dev)"
    )
    assert not (tmp_path / "t").exists()


def test_unknown_split_names_the_ones_that_exist(mirror, tmp_path):
    got = _cli(tmp_path, "data", "get", "madqa", "--split", "validation", "--out",
               str(tmp_path / "v"), "--mirror", str(mirror))  # fmt: skip
    assert got.returncode == 2
    last = got.stderr.strip().splitlines()[-1]
    assert last.startswith("rlm-docs data get: error: OxRML/MADQA: ") and "dev" in last
    assert "Traceback" not in got.stderr


def test_no_network_is_one_clear_line(tmp_path):
    # The hub unreachable and nothing cached: HF_HUB_OFFLINE makes `datasets` fail as it does
    # without a network, at once instead of after its retries.
    got = _cli(tmp_path, "data", "get", "madqa", "--out", str(tmp_path / "n"))
    assert got.returncode == 2
    lines = got.stderr.strip().splitlines()
    assert "Traceback" not in got.stderr
    assert lines[-1].startswith(
        "rlm-docs data get: error: cannot reach the Hugging Face Hub for OxRML/MADQA"
    )
    assert "--mirror DIR" in lines[-1]
    assert not (tmp_path / "n").exists()


def test_unknown_benchmark_and_missing_mirror_copy(tmp_path):
    got = _cli(tmp_path, "data", "get", "madqb", "--out", str(tmp_path / "x"))
    assert got.returncode == 2
    assert got.stderr.strip() == (
        "rlm-docs data get: error: unknown benchmark 'madqb'; choose from madqa, financebench, mmlongbench-doc, oolong"
    )
    got = _cli(tmp_path, "data", "get", "madqa", "--out", str(tmp_path / "x"),
               "--mirror", str(tmp_path))  # fmt: skip
    assert got.returncode == 2
    assert f"no copy of OxRML/MADQA (expected the directory {tmp_path}/OxRML/MADQA)" in (got.stderr)


def test_mirror_from_the_environment(mirror, tmp_path):
    env_mirror = {"RLM_DOCS_HUB_MIRROR": str(mirror)}
    got = subprocess.run(
        [sys.executable, "-m", "rlm_docs", "data", "get", "madqa", "--limit", "3", "--out",
         str(tmp_path / "m")],
        cwd=ROOT, env=_env(tmp_path) | env_mirror, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert got.returncode == 0, got.stderr
    assert len((tmp_path / "m" / "questions.jsonl").read_text().splitlines()) == 3
    got = subprocess.run(
        [sys.executable, "-m", "rlm_docs", "data", "get", "madqa", "--out", str(tmp_path / "e")],
        cwd=ROOT, env=_env(tmp_path) | {"RLM_DOCS_HUB_MIRROR": str(tmp_path)},
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert got.returncode == 2
    assert got.stderr.strip().splitlines()[-1] == (
        f"rlm-docs data get: error: RLM_DOCS_HUB_MIRROR={tmp_path}: no copy of OxRML/MADQA "
        f"(expected the directory {tmp_path}/OxRML/MADQA)"
    )


def test_oolong_one_store_per_window_then_eval(tmp_path):
    mirror = write_oolong_mirror(tmp_path / "mirror")
    # only the asked split is downloaded and read: a broken `test` file does not matter
    test_split = mirror / "oolongbench" / "oolong-synth" / "data" / "test-00000-of-00001.parquet"
    test_split.write_bytes(b"not parquet")
    out = tmp_path / "oolong"
    got = _cli(tmp_path, "data", "get", "oolong", "--out", str(out), "--mirror", str(mirror),
               "--json")  # fmt: skip
    assert got.returncode == 0, got.stderr
    summary = json.loads(got.stdout)
    assert summary["split"] == "validation" and summary["questions"] == 13
    assert [p["window"] for p in summary["parts"]] == ["window-7", "window-12"]
    assert json.loads((out / "manifest.json").read_text()) == summary

    for window_id, (window, items) in oolong_windows().items():
        part = out / f"window-{window_id}"
        corpus = Corpus.load(part / "corpus")
        # one document, pages cut at line boundaries that join back to the window exactly
        assert corpus.names == ["oolong_window"]
        pages = [
            corpus.page("oolong_window", n) for n in range(1, corpus.num_pages("oolong_window") + 1)
        ]
        assert "".join(pages) == window.text() and len(pages) > 1
        lines = [json.loads(x) for x in (part / "questions.jsonl").read_text().splitlines()]
        assert [q["question"] for q in lines[: len(items)]] == [i.question for i in items]
        assert [q["answer_variants"] for q in lines[: len(items)]] == [[[i.answer]] for i in items]
        assert {q["scorer"] for q in lines} == {"oolong"}
        assert [q["answer_type"] for q in lines[: len(items)]] == [i.answer_type for i in items]
    dated = json.loads((out / "window-12" / "questions.jsonl").read_text().splitlines()[-1])
    assert dated["answer_variants"] == [["2023-02-02"]] and dated["answer_type"] == "date"

    run = tmp_path / "run"
    part = out / "window-7"
    ev = _cli(tmp_path, "eval", "--dataset", str(part / "questions.jsonl"), "--corpus",
              str(part / "corpus"), "--system", "rlm", "--model", "offline", "--out", str(run),
              "--no-progress", "--workers", "1")  # fmt: skip
    assert ev.returncode == 0, ev.stderr
    results = [json.loads(x) for x in (run / "results.jsonl").read_text().splitlines()]
    assert len(results) == 6 and {r["stage"] for r in results} == {"oolong"}
    # "which user is represented most often" needs no labels: the offline model counts it
    top_user = [r for r in results if r["question_type"] == "TASK_TYPE.TOP_USER"]
    assert top_user and all(r["score"] == 1.0 for r in top_user)


def test_oolong_bad_answer_literal_is_one_line(tmp_path):
    import pyarrow.parquet as pq

    mirror = write_oolong_mirror(tmp_path / "mirror")
    path = mirror / "oolongbench" / "oolong-synth" / "data" / "validation-00000-of-00001.parquet"
    table = pq.read_table(path).to_pylist()
    table[2]["answer"] = "most common: location"
    pq.write_table(pa.Table.from_pylist(table, schema=OOLONG_SCHEMA), path)
    got = _cli(tmp_path, "data", "get", "oolong", "--out", str(tmp_path / "o"), "--mirror",
               str(mirror))  # fmt: skip
    assert got.returncode == 2
    assert got.stderr.strip().splitlines()[-1] == (
        "rlm-docs data get: error: oolongbench/oolong-synth validation row 3: field 'answer' "
        "'most common: location' is not a list literal"
    )
    assert not (tmp_path / "o").exists()


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def _get_questions(tmp_path: Path, name: str, mirror: Path, out: Path) -> tuple[str, list[dict]]:
    """`data get NAME` of a questions-only benchmark: (its stdout, the question file's rows)."""
    got = _cli(tmp_path, "data", "get", name, "--out", str(out), "--mirror", str(mirror))
    assert got.returncode == 0, got.stderr
    return got.stdout, _jsonl(out / "questions.jsonl")


def _eval_on_demo_pages(tmp_path: Path, out: Path, *flags: str) -> list[dict]:
    """The corpus a questions-only benchmark's hint asks for (here the demo filings' pages)
    ingested into `out/corpus`, then `eval` over it as written; the result rows."""
    ing = _cli(tmp_path, "ingest", str(ROOT / "corpus" / "documents"), "--out", str(out / "corpus"))
    assert ing.returncode == 0, ing.stderr
    run = tmp_path / "run"
    ev = _cli(tmp_path, "eval", "--dataset", str(out / "questions.jsonl"), "--corpus",
              str(out / "corpus"), "--system", "rlm", "--model", "offline", "--out", str(run),
              "--no-progress", "--workers", "2", *flags)  # fmt: skip
    assert ev.returncode == 0, ev.stderr
    return _jsonl(run / "results.jsonl")


def test_financebench_questions_then_eval_on_an_ingested_corpus(tmp_path):
    mirror = write_financebench_mirror(tmp_path / "mirror")
    out = tmp_path / "fb"
    said, lines = _get_questions(tmp_path, "financebench", mirror, out)
    assert f"rlm-docs ingest PDF_DIR --out {out}/corpus" in said
    assert not (out / "corpus").exists()
    demo = _jsonl(ROOT / "corpus" / "questions.jsonl")
    assert len(lines) == len(demo)
    # evidence_page_num counts from 0; the question file from 1, as the demo questions do
    assert [q["evidence"] for q in lines] == [q["evidence"] for q in demo]
    assert lines[0]["company"] == "3M" and lines[0]["doc_period"] == 2018

    results = _eval_on_demo_pages(tmp_path, out, "--where", "company=3M")
    assert results and all(r["doc_f1"] == 1.0 for r in results)
    assert any(r["page_f1"] > 0 for r in results)


def test_financebench_negative_page_is_one_line(tmp_path):
    mirror = write_financebench_mirror(tmp_path / "mirror")
    path = mirror / "PatronusAI" / "financebench" / "financebench_merged.jsonl"
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    rows[1]["evidence"][0]["evidence_page_num"] = -1
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    got = _cli(tmp_path, "data", "get", "financebench", "--out", str(tmp_path / "f"), "--mirror",
               str(mirror))  # fmt: skip
    assert got.returncode == 2
    assert got.stderr.strip().splitlines()[-1] == (
        "rlm-docs data get: error: PatronusAI/financebench train row 2: evidence[0] needs "
        "'evidence_page_num' >= 0"
    )
    assert not (tmp_path / "f").exists()


def test_mmlongbench_questions_then_eval_on_an_ingested_corpus(tmp_path):
    mirror = write_mmlongbench_mirror(tmp_path / "mirror")
    out = tmp_path / "mm"
    said, lines = _get_questions(tmp_path, "mmlongbench-doc", mirror, out)
    assert f"--out {out}/corpus" in said and "hf download yubo2333/MMLongBench-Doc" in said
    demo = _jsonl(ROOT / "corpus" / "questions.jsonl")
    assert [q["id"] for q in lines[:2]] == ["mmlb_0001", "mmlb_0002"]
    for q, d in zip(lines, demo, strict=False):
        doc = d["evidence"][0]["document"]
        want = [
            {"document": f"{doc}.pdf", "page": e["page"]}
            for e in d["evidence"]
            if e["document"] == doc
        ]
        assert q["evidence"] == want
        assert q["question_type"] == ("single-page" if len(want) == 1 else "cross-page")
    unanswerable, listed, zero = lines[-3:]
    assert unanswerable["evidence"] == [] and unanswerable["question_type"] == "unanswerable"
    assert unanswerable["answer_variants"] == [["Not answerable"]]
    assert listed["answer_variants"] == [["32,765", "31,657"]]
    assert zero["evidence"] == [{"document": "3M_2018_10K.pdf", "page": 56}]
    assert zero["evidence_pages"] == [0, 56] and "page 0" in zero["evidence_note"]

    results = _eval_on_demo_pages(tmp_path, out, "--limit", "4")
    assert len(results) == 4 and all(r["doc_f1"] == 1.0 for r in results)


def test_mmlongbench_bad_pages_is_one_line(tmp_path):
    import pyarrow.parquet as pq

    mirror = write_mmlongbench_mirror(tmp_path / "mirror")
    path = mirror / "yubo2333" / "MMLongBench-Doc" / "data" / "train-00000-of-00001.parquet"
    rows = pq.read_table(path).to_pylist()
    rows[0]["evidence_pages"] = "page 5"
    pq.write_table(pa.Table.from_pylist(rows, schema=MMLONGBENCH_SCHEMA), path)
    got = _cli(tmp_path, "data", "get", "mmlongbench-doc", "--out", str(tmp_path / "m"),
               "--mirror", str(mirror))  # fmt: skip
    assert got.returncode == 2
    assert got.stderr.strip().splitlines()[-1] == (
        "rlm-docs data get: error: yubo2333/MMLongBench-Doc train row 1: field 'evidence_pages' "
        "'page 5' is not a list literal"
    )
    assert not (tmp_path / "m").exists()


def test_unreadable_hub_file_is_one_line(tmp_path):
    # `datasets` reads every split of a repository without `split_files`: a broken file of
    # another split stops the get, in one line naming the repository and the reader's reason
    mirror = write_madqa_mirror(tmp_path / "mirror")
    broken = mirror / "OxRML" / "MADQA" / "data" / "test-00000-of-00001.parquet"
    broken.write_bytes(b"not parquet")
    got = _cli(tmp_path, "data", "get", "madqa", "--out", str(tmp_path / "u"), "--mirror",
               str(mirror))  # fmt: skip
    assert got.returncode == 2 and "Traceback" not in got.stderr
    last = got.stderr.strip().splitlines()[-1]
    assert last.startswith("rlm-docs data get: error: OxRML/MADQA: cannot read its files (")
    assert "Parquet" in last
    assert not (tmp_path / "u").exists()
    # the asked split's own file broken: one line too
    mirror = write_oolong_mirror(tmp_path / "mirror")
    data = mirror / "oolongbench" / "oolong-synth" / "data"
    (data / "validation-00000-of-00001.parquet").write_bytes(b"not parquet")
    got = _cli(tmp_path, "data", "get", "oolong", "--out", str(tmp_path / "u"), "--mirror",
               str(mirror))  # fmt: skip
    assert got.returncode == 2 and "Traceback" not in got.stderr
    assert (
        got.stderr.strip()
        .splitlines()[-1]
        .startswith("rlm-docs data get: error: oolongbench/oolong-synth: ")
    )
    assert not (tmp_path / "u").exists()
