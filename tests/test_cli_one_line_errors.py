"""Every user mistake, argparse's own included, is ONE line `rlm-docs <subcommand path>: error:
<message>` and exit 2: no usage block, the full subcommand path (`corpus search`, `bench make`),
never the command name twice. Also `corpus search --doc` takes the helpers' name/glob/fragment
forms, and counts of one read in the singular."""

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from rlm_docs.cli import main
from rlm_docs.number_flags import plural
from tests.fixtures.cli import SCRIPT
from tests.fixtures.engine import saved_store

DOCS = {
    "ACME_2022_10K": ["ACME overview", "Net sales were $10 million in 2022."],
    "ACME_2023_10K": ["ACME overview", "Net sales were $12 million in 2023."],
    "GLOBEX_2022_10K": ["Globex overview", "Net sales were $7 million in 2022."],
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return saved_store(tmp_path_factory, DOCS)


def parse_error(argv: list[str], capsys) -> str:
    """The stderr of an argparse refusal, asserted to be exactly one line and exit 2."""
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err  # no usage block
    return lines[0]


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["ask", "q", "--max-steps", "0"], "rlm-docs ask: error: argument --max-steps: must be"),
        (["ask", "q", "--max-wall", "0"], "rlm-docs ask: error: argument --max-wall: must be"),
        (["ask", "q", "--prompt", "foo"], "rlm-docs ask: error: argument --prompt: invalid choice"),
        (["eval", "--limit", "0"], "rlm-docs eval: error: argument --limit: must be >= 1"),
        (
            ["bench", "make", "needle", "--tokens", "abc"],
            "rlm-docs bench make: error: argument --tokens: expected a token count",
        ),
        (["corpus", "search", "s", "q", "-k", "-3"], "rlm-docs corpus search: error: argument -k"),
        (["corpus"], "rlm-docs corpus: error: the following arguments are required: ACTION"),
        ([], "rlm-docs: error: the following arguments are required: COMMAND"),
    ],
)
def test_argparse_errors_are_one_line(argv, expected, capsys):
    assert parse_error(argv, capsys).startswith(expected)


@pytest.mark.parametrize(
    "argv, prog",
    [
        (["ask", "q", "--bogus"], "rlm-docs ask"),
        (["corpus", "search", "s", "q", "--bogus", "x"], "rlm-docs corpus search"),
        (["bench", "make", "needle", "--out", "o", "--bogus"], "rlm-docs bench make"),
    ],
)
def test_unrecognized_arguments_name_the_subcommand(argv, prog, capsys):
    extra = " ".join(argv[argv.index("--bogus") :])
    assert parse_error(argv, capsys) == f"{prog}: error: unrecognized arguments: {extra}"


def test_help_still_prints_usage(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["corpus", "search", "--help"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.startswith("usage: rlm-docs corpus search ")


def test_command_errors_use_the_full_subcommand_path(home, store, capsys):
    assert main(["corpus", "show", str(store), "ACME_2022_10K", "999"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rlm-docs corpus show: error: ") and len(err.splitlines()) == 1
    assert main(["bench", "make", "oolong", "--out", "o", "--filler", "x"]) == 2
    assert capsys.readouterr().err.startswith("rlm-docs bench make: error: --filler")


def test_report_error_names_the_command_once(home, store, capsys):
    for name, qid in (("a", "q1"), ("b", "q2")):
        row = {"id": qid, "question": "Net sales in 2022?", "answer_variants": [["$10 million"]]}
        (home / f"{name}.jsonl").write_text(json.dumps(row) + "\n")
        argv = ["eval", "--dataset", f"{name}.jsonl", "--corpus", str(store), "--system", "rlm"]
        assert main([*argv, "--model", "offline", "--out", f"run_{name}", "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["report", "run_a", "run_b", "--out", "rep"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rlm-docs report: error: the runs share no question")
    assert "report: error: report:" not in err and len(err.splitlines()) == 1


def test_search_doc_takes_a_name_glob_or_fragment(store, capsys):
    def docs(spec: str) -> set[str]:
        assert main(["corpus", "search", str(store), "net sales", "--doc", spec, "--json"]) == 0
        return {json.loads(line)["document"] for line in capsys.readouterr().out.splitlines()}

    assert docs("acme_2022_10k") == {"ACME_2022_10K"}
    assert docs("ACME_*") == {"ACME_2022_10K", "ACME_2023_10K"}
    assert docs("2022") == {"ACME_2022_10K", "GLOBEX_2022_10K"}
    assert main(["corpus", "search", str(store), "net sales", "--doc", "INITECH"]) == 2
    assert capsys.readouterr().err.startswith("rlm-docs corpus search: error: ")


def test_counts_of_one_are_singular(home, store, capsys):
    assert plural(1, "step") == "1 step" and plural(2, "step") == "2 steps"
    assert plural(0, "document") == "0 documents" and plural(1234, "page") == "1,234 pages"
    (home / "one.md").write_text("a single page\n")
    assert main(["ingest", "one.md", "--out", "s"]) == 0
    assert "1 document, 1 page, " in capsys.readouterr().out
    assert main(["ask", "Net sales in 2022?", "--corpus", str(store), "--log-dir", "logs"]) == 0
    steps = re.search(r"(\d+) (root steps?), (\d+) (sub-calls?),", capsys.readouterr().out)
    assert steps is not None
    for number, noun in ((steps[1], steps[2]), (steps[3], steps[4])):
        assert noun.endswith("s") == (number != "1")


@pytest.mark.skipif(SCRIPT is None, reason="rlm-docs script not installed")
def test_installed_script_prints_exactly_one_line(home):
    for argv, expected in (
        (["ask", "q", "--bogus"], "rlm-docs ask: error: unrecognized arguments: --bogus"),
        (
            ["eval", "--limit", "0"],
            "rlm-docs eval: error: argument --limit: must be >= 1, got 0",
        ),
    ):
        run = subprocess.run(
            [SCRIPT, *argv], cwd=home, env=dict(os.environ), capture_output=True, text=True
        )
        assert run.returncode == 2 and run.stdout == ""
        assert run.stderr.splitlines() == [expected]


@pytest.mark.skipif(SCRIPT is None, reason="rlm-docs script not installed")
@pytest.mark.parametrize("command", ["corpus info", "ask"])
def test_a_reader_that_left_is_not_an_error(home, store, command):
    """`rlm-docs corpus info STORE --json | head`, `rlm-docs ask Q | head -1`: the pipe's
    reader is gone before the write (`ask` prints with rich, which would exit 1)."""
    argv = {
        "corpus info": ["corpus", "info", str(store), "--json"],
        "ask": ["ask", "What was 3M's capital spending in 2018?", "--corpus", str(store)],
    }[command]
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        run = subprocess.run(
            [SCRIPT, *argv],
            cwd=home,
            env=dict(os.environ),
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
        )
    finally:
        os.close(write_end)
    assert run.stderr == "" and run.returncode == 141
