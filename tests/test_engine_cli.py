"""`rlm-docs ask`: output, JSON, trajectory file, budget flags and user errors."""

import json
import re
from pathlib import Path

import pytest

from rlm_docs.cli import main
from rlm_docs.corpus import Corpus

DOCS = {"acme_2020_10k": ["Intro page.", "Total revenue was $412 million in 2020."]}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return Corpus.from_documents(DOCS).save(tmp_path_factory.mktemp("cli") / "store")


def test_ask_prints_answer_citations_and_summary(store, tmp_path, capsys):
    code = main(
        [
            "ask",
            "What was Acme revenue in 2020?",
            "--corpus",
            str(store),
            "--log-dir",
            str(tmp_path),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "Answer: $412 million" in out
    assert "Citations: acme_2020_10k p.2" in out
    assert "2 root steps" in out and "stop: final" in out and "$0.0000" in out
    assert len(list(tmp_path.glob("rlm_*.jsonl"))) == 1


def test_ask_json_and_budget_flags(store, tmp_path, capsys):
    code = main(
        [
            "ask",
            "What was Acme revenue in 2020?",
            "--corpus",
            str(store),
            "--json",
            "--max-steps",
            "1",
            "--log-dir",
            str(tmp_path),
        ]
    )
    record = json.loads(capsys.readouterr().out)
    assert code == 0
    # the offline code finishes in its one step; no step is left to confirm, so it stands
    assert record["stop_reason"] == "final" and record["steps"] == 1
    assert record["question"] == "What was Acme revenue in 2020?"
    assert Path(record["trajectory"]).is_file()


def test_ask_user_errors_exit_2_with_one_line(store, tmp_path, capsys):
    assert main(["ask", "q", "--corpus", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rlm-docs ask: error:") and "missing" in err
    with pytest.raises(SystemExit) as refused:  # argparse refuses it (exit 2)
        main(["ask", "q", "--corpus", str(store), "--max-steps", "-1"])
    assert refused.value.code == 2
    assert "argument --max-steps: must be >= 1" in capsys.readouterr().err
    assert main(["ask", "q", "--corpus", str(store), "--model", "nonsense"]) == 2
    assert "nonsense" in capsys.readouterr().err


def test_ask_verbose_shows_each_turn_on_stderr(store, tmp_path, capsys):
    replies = [
        "```repl\nprint('looking')\n1/0\n```",
        "```repl\nres = {'answer': ['$412 million'], "
        "'citations': [{'file': 'acme_2020_10k', 'page': 2}]}\nprint('ok')\n```\nFINAL_VAR(res)",
    ]
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(replies))
    argv = ["ask", "Acme revenue?", "--corpus", str(store), "--model", f"scripted:{script}"]
    assert main([*argv, "--log-dir", str(tmp_path), "-v"]) == 0
    captured = capsys.readouterr()
    err = captured.err
    assert err.index("── turn 1") < err.index("print('looking')") < err.index("ZeroDivisionError")
    assert err.index("ZeroDivisionError") < err.index("── turn 2") < err.index("final:")
    assert "Answer: $412 million" in captured.out and "── turn" not in captured.out


def test_ask_timeout_flag_sets_the_http_timeout_and_rejects_nonsense(
    store, tmp_path, capsys, monkeypatch
):
    import os

    from rlm_docs.models.factory import client_settings, set_default_timeout
    from tests.servers.chat import ChatServer

    monkeypatch.delenv("RLM_DOCS_TIMEOUT", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key")
    monkeypatch.setenv("RLM_DOCS_CACHE", "off")
    with pytest.raises(SystemExit) as stop:
        main(["ask", "q", "--corpus", str(store), "--timeout", "0"])
    assert stop.value.code == 2 and "argument --timeout: must be > 0" in capsys.readouterr().err
    with ChatServer(reply=lambda m: "FINAL(fast)", api_key="sk-test-key") as srv:
        srv.delay(1.5)
        args = ["ask", "q", "--corpus", str(store), "--log-dir", str(tmp_path), "--json"]
        model = ["--model", f"openai:m@{srv.base_url}"]
        try:
            assert main([*args, *model, "--timeout", "0.4", "--max-steps", "1"]) == 0
            # held as data for the clients (and sent to Ray workers), not written to os.environ
            assert "RLM_DOCS_TIMEOUT" not in os.environ
            assert client_settings()["RLM_DOCS_TIMEOUT"] == "0.4"
        finally:
            set_default_timeout(None)
        # the delayed first request timed out at 0.4 s and was retried (so the server saw 2)
        assert len(srv.requests) >= 2
    capsys.readouterr()


def test_ask_no_confirm_final_skips_the_confirmation_turn(store, tmp_path, capsys):
    argv = ["ask", "What was Acme revenue in 2020?", "--corpus", str(store), "--json"]
    argv += ["--log-dir", str(tmp_path)]
    assert main(argv) == 0
    confirmed = json.loads(capsys.readouterr().out)
    assert main([*argv, "--no-confirm-final"]) == 0
    direct = json.loads(capsys.readouterr().out)
    assert confirmed["answer"] == direct["answer"] == ["$412 million"]
    assert (confirmed["steps"], direct["steps"]) == (2, 1)


def test_a_budget_below_one_call_says_the_call_was_refused(store, tmp_path, capsys, monkeypatch):
    from tests.servers.chat import ChatServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-000000000000000000")
    monkeypatch.setenv("RLM_DOCS_CACHE", "off")
    with ChatServer(reply=lambda m: "FINAL(1)") as server:
        code = main(
            ["ask", "What was Acme revenue in 2020?", "--corpus", str(store),
             "--model", f"openai:gpt-5-mini@{server.base_url}", "--max-cost", "0.00001",
             "--log-dir", str(tmp_path)]
        )  # fmt: skip
        assert server.requests == []
    captured = capsys.readouterr()
    assert code == 2
    assert "stop: budget" in captured.out
    assert re.fullmatch(
        r"error: the dollar budget of \$0\.0000 refused the first model call \(it needs "
        r"\$0\.\d{4}\), so no model was asked\n",
        captured.err,
    ), captured.err
