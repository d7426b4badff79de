"""Terminal control sequences from models and documents never reach the terminal."""

import json
from pathlib import Path

import pytest

from rlm_docs.cli import main
from rlm_docs.corpus import Corpus
from rlm_docs.terminal_text import json_text, sanitize

ESC = "\x1b"
HOSTILE = (
    f"{ESC}]0;pwned title{ESC}\\"  # OSC window title
    f"{ESC}]8;;http://evil.example/{ESC}\\click{ESC}]8;;{ESC}\\"  # OSC 8 hyperlink
    f"{ESC}[2J{ESC}[H"  # clear screen, cursor home
    f"{ESC}[8mhidden{ESC}[0m"  # concealed text
    "\x9b31m\x9d0;c1 title\x07"  # 8-bit CSI and OSC
    f"{ESC}P1$qm{ESC}\\"  # DCS
    "\x07\x08\r\x00\x7f"  # BEL, backspace, carriage return, NUL, DEL
)


def test_sanitize_strips_every_control_sequence_and_keeps_text() -> None:
    clean = sanitize("Revenue:\t$12 million\n" + HOSTILE + " — ok ✓")
    assert clean == "Revenue:\t$12 million\nclickhidden — ok ✓"
    assert not any(ord(c) < 32 and c not in "\t\n" or 0x7F <= ord(c) <= 0x9F for c in clean)


@pytest.mark.parametrize(
    "text", [ESC * 1_000_000, (ESC + "[") * 500_000, (ESC + "]") * 500_000, "\x9b1" * 500_000]
)
def test_sanitize_is_linear_on_one_megabyte(text: str) -> None:
    assert sanitize(text + "\nend").endswith("\nend")


def test_json_text_escapes_c1_and_keeps_the_data() -> None:
    value = {"answer": [HOSTILE]}
    text = json_text(value)
    assert not any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F for c in text)
    assert json.loads(text) == value


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    docs = {f"memo{ESC}[2J": [f"Budget {ESC}]0;doc title{ESC}\\was $12 million."]}
    return Corpus.from_documents(docs).save(tmp_path_factory.mktemp("corpus") / "store")


def test_ask_and_corpus_commands_print_no_control_sequences(store, tmp_path, capsys) -> None:
    replies = [
        f"```repl\nprint({HOSTILE!r})\n```",
        f"FINAL(twelve {HOSTILE} million)",
        json.dumps({"answer": [f"$12 {HOSTILE}million"], "citations": []}),
    ]
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(replies * 2))
    args = ["ask", "How much?", "--corpus", str(store), "--log-dir", str(tmp_path)]
    assert main([*args, "--model", f"scripted:{script}", "-v"]) == 0
    out, err = capsys.readouterr()
    assert "Answer: $12 clickhidden" in out and "million" in out
    assert "clickhidden" in err  # the REPL output and the final answer, shown by -v
    script.write_text(json.dumps(replies))
    assert main([*args, "--model", f"scripted:{script}", "--json"]) == 0
    shown = capsys.readouterr().out
    assert json.loads(shown)["answer"] == [f"$12 {HOSTILE}million"]
    assert main(["corpus", "show", str(store), f"memo{ESC}[2J", "1"]) == 0
    assert main(["corpus", "info", str(store)]) == 0
    assert main(["corpus", "search", str(store), "budget"]) == 0
    printed = out + err + shown + capsys.readouterr().out
    assert not any(ord(c) < 32 and c not in "\t\n" or 0x7F <= ord(c) <= 0x9F for c in printed)


def test_error_lines_are_sanitized_too(tmp_path, capsys) -> None:
    assert main(["corpus", "info", str(tmp_path / f"no{ESC}]0;owned{ESC}\\store")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rlm-docs corpus info: error:") and "nostore" in err and ESC not in err


LINKED = "[link=https:evil.example]3M_2018_10K"


def printable(text: str) -> bool:
    return not any(ord(c) < 32 and c not in "\t\n" or 0x7F <= ord(c) <= 0x9F for c in text)


def test_names_are_shown_as_written_never_parsed_as_markup(tmp_path, capsys) -> None:
    docs = {LINKED: ["Budget was $12 million."], f"memo{ESC}]8;;http://evil.example/{ESC}\\": ["x"]}
    store = Corpus.from_documents(docs).save(tmp_path / f"[bold]store{ESC}]0;t{ESC}\\")
    assert main(["corpus", "info", str(store)]) == 0
    info = capsys.readouterr().out
    assert LINKED in info and "[bold]store" in info and printable(info)
    assert main(["corpus", "search", str(store), "budget"]) == 0
    found = capsys.readouterr().out
    assert f"1. {LINKED} p.1" in found and printable(found)


def test_eval_unknown_document_warning_is_sanitised(
    rlm_home, tmp_path, monkeypatch, capsys
) -> None:
    from tests.fixtures.eval.support import build_store, fake_model
    from tests.servers.chat import ChatServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-000000000000000000")
    monkeypatch.setenv("RLM_DOCS_CACHE", "off")
    question = {
        "id": f"q{ESC}]0;pwned{ESC}\\1",
        "question": "What was Acme revenue for fiscal 2022?",
        "answer_variants": [["$4.2 billion"]],
        "evidence": [{"document": f"{LINKED}{ESC}]8;;http://evil.example/{ESC}\\", "page": 1}],
    }
    dataset = tmp_path / "questions.jsonl"
    dataset.write_text(json.dumps(question) + "\n")
    store = build_store(tmp_path / "store")
    with ChatServer(reply=fake_model) as srv:
        argv = ["eval", "--dataset", str(dataset), "--corpus", str(store), "--no-progress"]
        argv += ["--system", "static-rag", "--model", f"openai:fake@{srv.base_url}"]
        assert main([*argv, "--out", str(tmp_path / "run")]) == 0
    err = capsys.readouterr().err
    assert "warning: 1 question(s)" in err and LINKED in err and printable(err)
