"""What the CLI says: errors from environment variables name the variable, long lines are not
hard-wrapped when piped, a failed connection names the server, a forced final turn that only
wrote code has no answer, and `ask -v` shows sub-call prompts and replies and the full code."""

import json
import os
import socket
import subprocess
from pathlib import Path

import pytest

from rlm_docs.cli import main
from rlm_docs.models import make_client
from rlm_docs.models.errors import ModelUnavailableError
from rlm_docs.models.retry import RetryPolicy
from tests.fixtures.cli import SCRIPT
from tests.fixtures.engine import saved_store
from tests.servers.chat import ChatServer

DOCS = {"acme_2020_10k": ["Intro page.", "Total revenue was $412 million in 2020."]}
QUESTION = "What was Acme revenue in 2020?"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return saved_store(tmp_path_factory, DOCS)


def scripted(path: Path, replies: list[str]) -> str:
    path.write_text(json.dumps(replies))
    return f"scripted:{path}"


def last_error(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip().splitlines()[-1]


def test_errors_from_environment_variables_name_the_variable(home, store, monkeypatch, capsys):
    ask = ["ask", QUESTION, "--corpus", str(store), "--log-dir", "logs"]
    monkeypatch.setenv("RLM_DOCS_MODEL", "bogus")
    assert main(ask) == 2
    assert last_error(capsys).startswith("rlm-docs ask: error: RLM_DOCS_MODEL=bogus: model")
    monkeypatch.setenv("RLM_DOCS_MODEL", "offline")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("RLM_DOCS_SUB_MODEL", "openai:gpt-5-mini")
    assert main(ask) == 2
    line = last_error(capsys)
    assert "RLM_DOCS_SUB_MODEL=openai:gpt-5-mini:" in line and "OPENAI_API_KEY" in line
    monkeypatch.delenv("RLM_DOCS_SUB_MODEL")
    monkeypatch.setenv("RLM_DOCS_PRICES", str(home / "nope.json"))
    assert main([*ask, "--model", "openai:x@http://127.0.0.1:9/v1", "--max-cost", "1"]) == 2
    assert f"RLM_DOCS_PRICES={home / 'nope.json'}: price table" in last_error(capsys)
    monkeypatch.delenv("RLM_DOCS_PRICES")
    (home / "afile.txt").write_text("x")
    monkeypatch.setenv("RLM_DOCS_CACHE", str(home / "afile.txt" / "cache.sqlite"))
    assert main([*ask, "--model", "openai:x@http://127.0.0.1:9/v1"]) == 2
    assert "error: RLM_DOCS_CACHE=" in last_error(capsys)


@pytest.mark.skipif(SCRIPT is None, reason="rlm-docs script not installed")
def test_long_error_lines_are_not_hard_wrapped_when_piped(home, store):
    with ChatServer(api_key="sk-right-key-0000000000000") as server:
        model = f"openai:fake@{server.base_url}"
        done = subprocess.run(
            [SCRIPT, "ask", QUESTION, "--corpus", str(store), "--model", model],
            env={**os.environ, "OPENAI_API_KEY": "sk-wrong-key-000000000000", "COLUMNS": "60"},
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 1  # the run ended in error; the prediction is still printed
    assert "Answer: (no answer)" in done.stdout
    [line] = [x for x in done.stderr.splitlines() if x.startswith("error:")]
    assert len(line) > 80 and line.endswith("check OPENAI_API_KEY")
    assert "authentication failed (HTTP 401)" in line


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("backend", ["openai", "mistral"])
def test_connection_errors_name_the_server(backend, home, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-000000000000")
    monkeypatch.setenv("MISTRAL_API_KEY", "test-000000000000")
    port = closed_port()
    url = f"http://127.0.0.1:{port}" + ("/v1" if backend == "openai" else "")
    client = make_client(
        f"{backend}:m@{url}", cache=False, retry=RetryPolicy(max_attempts=2, base_delay_s=0)
    )
    with pytest.raises(ModelUnavailableError) as failed:
        client.complete([{"role": "user", "content": "hi"}])
    message = str(failed.value)
    assert f"cannot reach http://127.0.0.1:{port}" in message and "2 attempt(s)" in message


def test_forced_final_turn_with_only_code_has_no_answer(home, store, capsys):
    model = scripted(
        home / "r.json", ["```repl\nx = 1\n```", "```repl\nprint(x)\nanswer_is = x\n```"]
    )
    argv = ["ask", QUESTION, "--corpus", str(store), "--model", model, "--log-dir", "logs"]
    assert main([*argv, "--max-steps", "1"]) == 0
    out = capsys.readouterr().out
    assert "Answer: (no answer)" in out and "```" not in out and "stop: forced" in out


def test_forced_final_turn_keeps_the_words_around_code(home, store, capsys):
    model = scripted(
        home / "r.json", ["```repl\nx = 1\n```", "The revenue was $412 million.\n```repl\nx\n```"]
    )
    argv = ["ask", QUESTION, "--corpus", str(store), "--model", model, "--log-dir", "logs"]
    assert main([*argv, "--max-steps", "1", "--json"]) == 0
    [answer] = json.loads(capsys.readouterr().out)["answer"]
    assert answer.startswith("The revenue was $412 million") and "```" not in answer


def test_ask_verbose_shows_sub_call_prompts_replies_and_full_code(home, store, capsys):
    code = "\n".join(f"step_{i} = {i}" for i in range(15))
    root = scripted(
        home / "root.json",
        [
            f"```repl\n{code}\nr = llm_query('Find the revenue line.\\n' + 'x' * 900)\nprint(r)\n```",
            "FINAL($412 million)",
        ],
    )
    sub = scripted(home / "sub.json", ["Total revenue was $412 million in 2020.\x1b]0;pwned\x07"])
    argv = ["ask", QUESTION, "--corpus", str(store), "--model", root, "--sub-model", sub]
    assert main([*argv, "--log-dir", "logs", "-v"]) == 0
    err = capsys.readouterr().err
    assert "step_14 = 14" in err and "more lines" not in err.split("1 sub-call")[0]
    assert "↳ llm_query: Find the revenue line." in err
    assert "more characters" in err  # the 900-character prompt line is clipped
    assert "→ Total revenue was $412 million in 2020." in err
    assert "\x1b" not in err and "\x07" not in err  # model text cannot drive the terminal
