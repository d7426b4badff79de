"""User mistakes on the command line: bad output paths, non-positive numbers, bad models, a bad
RLM_DOCS_HOME. Each is one line `rlm-docs CMD: error: ...`, exit 2, before any work is done and
without creating anything; some through the installed `rlm-docs` script in a subprocess."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from rlm_docs import __version__
from rlm_docs.cli import main
from rlm_docs.corpus import Corpus
from tests.fixtures.cli import SCRIPT
from tests.fixtures.engine import saved_store

DOCS = {"acme_2020_10k": ["Intro page.", "Total revenue was $412 million in 2020."]}
QUESTION = "What was Acme revenue in 2020?"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return saved_store(tmp_path_factory, DOCS)


@pytest.fixture
def home(home):
    """The shared CLI `home`, with a file where the tests pass a directory."""
    (home / "afile.txt").write_text("not a directory\n")
    return home


@pytest.fixture
def questions(tmp_path) -> Path:
    path = tmp_path / "q.jsonl"
    row = {
        "id": "q1",
        "question": QUESTION,
        "answer_variants": [["$412 million"]],
        "evidence": [{"document": "acme_2020_10k", "page": 2}],
        "question_type": "extractive",
    }
    path.write_text(json.dumps(row) + "\n")
    return path


def error_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err
    return err.splitlines()[-1]


def test_ask_log_dir_that_is_a_file_fails_before_the_question_runs(home, store, capsys):
    code = main(["ask", QUESTION, "--corpus", str(store), "--log-dir", "afile.txt"])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""  # no answer was computed and then lost
    assert captured.err.strip() == (
        "rlm-docs ask: error: --log-dir afile.txt: afile.txt is a file, not a directory"
    )
    assert not (home / "home" / "runs").exists()


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["view", "x.jsonl", "--out", "afile.txt/x.html"], "view: error: --out afile.txt/x.html"),
        (["report", "run", "--out", "afile.txt"], "report: error: --out afile.txt: afile.txt is"),
        (["ingest", "src.md", "--out", "/proc/nope"], "ingest: error: --out /proc/nope: cannot"),
        (["ingest", "src.md", "--out", "afile.txt/store"], "ingest: error: --out afile.txt/store"),
        (["bench", "make", "needle", "--out", "afile.txt"], "bench make: error: --out afile.txt"),
    ],
)
def test_unusable_output_paths_are_one_line_errors(home, argv, expected, capsys):
    (home / "src.md").write_text("page one\fpage two\n")
    assert main(argv) == 2
    assert f"rlm-docs {expected}" in error_line(capsys)


def test_eval_out_that_is_a_file(home, store, questions, capsys):
    argv = ["eval", "--dataset", str(questions), "--corpus", str(store), "--system", "rlm"]
    assert main([*argv, "--model", "offline", "--out", "afile.txt"]) == 2
    assert "--out afile.txt: afile.txt is a file, not a directory" in error_line(capsys)


def test_unwritable_rlm_docs_home_names_the_variable(home, store, monkeypatch, capsys):
    monkeypatch.setenv("RLM_DOCS_HOME", "afile.txt")
    assert main(["ask", QUESTION, "--corpus", str(store), "--log-dir", "logs"]) == 2
    line = error_line(capsys)
    assert line.startswith("rlm-docs ask: error: RLM_DOCS_HOME=afile.txt:")
    assert main(["corpus", "info", "demo"]) == 2
    assert "RLM_DOCS_HOME=afile.txt" in error_line(capsys)


def test_os_error_on_a_user_path_is_one_line(home, capsys):
    # an OS failure no check foresees (here ENAMETOOLONG, which pathlib does not swallow)
    # still becomes one line naming the path, never a traceback
    name = "x" * 300
    assert main(["corpus", "info", name]) == 2
    assert error_line(capsys) == f"rlm-docs corpus info: error: {name}: File name too long"


@pytest.mark.parametrize(
    "argv",
    [
        ["ask", QUESTION, "--max-steps", "0"],
        ["ask", QUESTION, "--max-steps", "-2"],
        ["ask", QUESTION, "--concurrency", "0"],
        ["ask", QUESTION, "--max-cost", "0"],
        ["ask", QUESTION, "--max-wall", "-1"],
        ["ask", QUESTION, "--max-sub-calls", "-1"],
        ["corpus", "search", "demo", "revenue", "-k", "0"],
        ["corpus", "search", "demo", "revenue", "-k", "-3"],
        ["corpus", "show", "demo", "3M_2018_10K", "0"],
        ["eval", "--dataset", "q", "--corpus", "s", "--system", "rlm", "--model", "offline",
         "--out", "o", "--workers", "0"],
        ["eval", "--dataset", "q", "--corpus", "s", "--system", "rlm", "--model", "offline",
         "--out", "o", "--limit", "0"],
        ["eval", "--dataset", "q", "--corpus", "s", "--system", "bm25-agent", "--model",
         "offline", "--out", "o", "--top-k", "-1"],
        ["eval", "--dataset", "q", "--corpus", "s", "--system", "rlm", "--model", "offline",
         "--out", "o", "--judge-sensitivity", "1.5"],
        ["bench", "make", "needle", "--out", "o", "--questions", "0"],
    ],
)  # fmt: skip
def test_non_positive_numbers_are_refused_by_the_parser(home, argv, capsys):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    path = " ".join(argv[:2] if argv[0] in ("corpus", "bench") else argv[:1])
    assert len(err.splitlines()) == 1  # no usage block
    assert err.startswith(f"rlm-docs {path}: error: argument") and "must be" in err
    assert not (home / "o").exists()


def test_zero_means_none_where_it_is_meaningful(home, store, capsys):
    argv = ["ask", QUESTION, "--corpus", str(store), "--log-dir", "logs", "--json"]
    assert main([*argv, "--max-sub-calls", "0", "--max-depth", "0"]) == 0
    assert json.loads(capsys.readouterr().out)["sub_calls"] == 0


@pytest.mark.parametrize(
    "model, expected",
    [
        ("bogus", "model 'bogus': expected BACKEND:MODEL"),
        ("openai:gpt-5-mini", "OPENAI_API_KEY is not set"),
    ],
)
def test_eval_with_a_bad_model_creates_no_run_directory(
    home, store, questions, model, expected, monkeypatch, capsys
):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    argv = ["eval", "--dataset", str(questions), "--corpus", str(store), "--system", "rlm"]
    out = home / "run"
    assert main([*argv, "--model", model, "--out", str(out), "--no-progress"]) == 2
    assert expected in error_line(capsys)
    assert not out.exists()
    # the corrected command is not blocked by anything the failed one left
    assert main([*argv, "--model", "offline", "--out", str(out), "--no-progress"]) == 0
    assert (out / "run.json").is_file()


def test_judge_missing_key_creates_no_run_directory(home, store, questions, monkeypatch, capsys):
    monkeypatch.delenv("MISTRAL_API_KEY", raising=False)
    monkeypatch.delenv("MISTRAL_BASE_URL", raising=False)
    argv = ["eval", "--dataset", str(questions), "--corpus", str(store), "--system", "rlm"]
    code = main([*argv, "--model", "offline", "--judge", "mistral:x", "--out", "run"])
    assert code == 2 and "MISTRAL_API_KEY is not set" in error_line(capsys)
    assert not (home / "run").exists()


@pytest.mark.skipif(SCRIPT is None, reason="rlm-docs script not installed")
def test_installed_script_version_and_errors(home, store):
    def run(*argv: str, env: dict | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [SCRIPT, *argv],
            cwd=home,
            env={**os.environ, **(env or {})},
            capture_output=True,
            text=True,
            timeout=120,
        )

    version = run("--version")
    assert version.returncode == 0 and version.stdout.strip() == f"rlm-docs {__version__}"
    bad = run("ask", QUESTION, "--corpus", str(store), "--log-dir", "afile.txt")
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.strip().splitlines() == [
        "rlm-docs ask: error: --log-dir afile.txt: afile.txt is a file, not a directory"
    ]
    steps = run("ask", QUESTION, "--max-steps", "0")
    assert steps.returncode == 2 and steps.stderr.splitlines() == [
        "rlm-docs ask: error: argument --max-steps: must be >= 1, got 0"
    ]
    home_file = run("ask", QUESTION, env={"RLM_DOCS_HOME": "afile.txt"})
    assert home_file.returncode == 2 and "Traceback" not in home_file.stderr
    assert "RLM_DOCS_HOME=afile.txt" in home_file.stderr


def test_demo_names_the_bundled_store(home, capsys):
    assert main(["corpus", "info", "demo", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["documents"] == 3 and "3M_2018_10K" in [d["name"] for d in info["per_document"]]
    assert main(["corpus", "show", "demo", "3m_2018_10k", "1"]) == 0
    assert capsys.readouterr().out.strip()
    code = main(["ask", QUESTION, "--corpus", "demo", "--log-dir", "logs", "--json"])
    assert code == 0 and json.loads(capsys.readouterr().out)["citations"]
    # a real directory called `demo` is what the user means
    Corpus.from_documents(DOCS).save(home / "demo")
    assert main(["corpus", "info", "demo", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["documents"] == 1
