"""The README's quickstart shows real offline answers: its `ask` example prints the answer and
citation shown under it, the Python quickstart's question gets the answer in its comment (both
are also correct: they are the demo set's gold answers), and the number of demo questions it
says the offline model gets right is what an eval of them measures."""

import json
import re
from pathlib import Path

from rlm_docs.cli import main
from rlm_docs.ingest.demo import demo_questions_path

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
GOLD = {
    json.loads(line)["question"]: json.loads(line)["answer_variants"]
    for line in demo_questions_path().read_text().splitlines()
}


def test_cli_quickstart_prints_the_output_shown(rlm_home, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("RLM_DOCS_MODEL", raising=False)
    question = re.search(r'^\.venv/bin/rlm-docs ask "([^"]+)"$', README, re.M).group(1)
    shown = re.search(r"^(Answer: .*)\n(Citations: .*)$", README, re.M)
    assert main(["ask", question, "--log-dir", str(tmp_path / "logs")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == [shown.group(1), shown.group(2)]
    assert shown.group(1).removeprefix("Answer: ") in str(GOLD[question])


def test_python_quickstart_answer_is_the_one_in_its_comment(rlm_home, tmp_path, capsys):
    found = re.search(r'p = rlm\.ask\("([^"]+)"\)\s+# -> (\[.*?\]), (\S+) p\.(\d+)', README)
    question, answer, doc, page = found.groups()
    argv = ["ask", question, "--corpus", "demo", "--json", "--max-steps", "10"]
    assert main([*argv, "--log-dir", str(tmp_path / "logs")]) == 0
    prediction = json.loads(capsys.readouterr().out)
    assert prediction["answer"] == json.loads(answer.replace("'", '"'))
    assert {"file": doc, "page": int(page)} in prediction["citations"]
    assert any(
        answer.strip("[]'") in variant[0].replace(" million", "") for variant in GOLD[question]
    )


def test_stated_offline_accuracy_on_the_demo_questions(rlm_home, tmp_path):
    from rlm_docs.eval.runner import EvalSettings, run_eval
    from rlm_docs.ingest.demo import demo_corpus_path

    stated = re.search(r"it gets (\d+) of the (\d+) demo questions", README.replace("\n", " "))
    settings = EvalSettings(
        dataset=demo_questions_path(),
        corpus=demo_corpus_path(),
        system="rlm",
        model="offline",
        out=tmp_path / "run",
        progress=False,
    )
    summary = run_eval(settings)
    assert summary["n"] == int(stated.group(2)) == len(GOLD)
    assert round(summary["accuracy"]["value"] * summary["n"]) == int(stated.group(1))
