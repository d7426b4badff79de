"""docs/models.md runs as written (`tests/doc_snippets.py`): its Python snippet, saved as
`my_models.py` and run, answers through `RLM` with a client of one's own, and its shell snippet
evaluates with `py:my_models:shouting`."""

from pathlib import Path

from tests.doc_snippets import Environment, lay_out, run_page


def test_the_client_snippet_and_the_py_model_string_run(tmp_path: Path, docs_env: Environment):
    work = lay_out(tmp_path / "work")
    client, shell = run_page("docs/models.md", work, docs_env.env)
    assert client.block.marker == "file" and (work / "my_models.py").is_file()
    assert "['I read nothing, but I answer loudly'] final" in client.stdout
    assert "rlm: 2 questions (2 run now)" in shell.stdout
    assert (work / "runs" / "mine" / "results.jsonl").read_text().count("\n") == 2
