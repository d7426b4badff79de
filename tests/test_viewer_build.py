"""`rlm-docs view`: loading run directories and trajectory logs, and the generated HTML."""

import json
import re
from pathlib import Path

import pytest

from rlm_docs.cli import main
from rlm_docs.corpus import Corpus
from rlm_docs.corpus.store import fingerprint
from rlm_docs.engine.prediction import Prediction
from rlm_docs.engine.records import CellResult, CodeBlock, Metadata, Result, SubCall, TurnUsage
from rlm_docs.engine.trajectory import TrajectoryWriter
from rlm_docs.errors import DatasetError
from rlm_docs.governor import Budget
from rlm_docs.viewer import build_html, load_source, write_viewer
from rlm_docs.viewer.load import MAX_STRING

HOSTILE = "Revenue table </script><script>window.PWNED=1</script> <!-- end"


def make_trajectory(path: Path, qid: str, question: str, answer: str, page: int) -> Path:
    """A realistic log written by the engine's own writer: two turns, one batched sub-call
    and one recursive child run with its own turn."""
    child = TrajectoryWriter(
        Metadata(root_model="offline", question="child task", depth=1, sub_model="offline")
    )
    turn = child.iteration([{"role": "user", "content": "summarise the page"}])
    turn.response = "FINAL(child summary)"
    turn.final_answer = "child summary"
    child.close(turn)
    child.result(Result(answer=["child summary"], citations=[], cost_usd=0.0))

    t = TrajectoryWriter(
        Metadata(
            root_model="offline",
            sub_model="offline",
            question=question,
            question_id=qid,
            depth=0,
            prompt_name="docs",
            budget={"max_steps": 5},
        )
    )
    first = t.iteration(
        [{"role": "system", "content": "You are an RLM."}, {"role": "user", "content": question}]
    )
    first.response = "```repl\nhits = search('net sales')\nprint(hits)\n```"
    ledger = {
        "question_id": qid,
        "depth": 0,
        "role": "sub",
        "model": "offline",
        "input_tokens": 120,
        "output_tokens": 9,
        "cost_usd": 0.00042,
        "latency_s": 0.01,
        "call_id": "c000002",
        "error": None,
    }
    calls = [
        SubCall(
            kind="llm_query",
            prompt="Question: net sales?\nPassage ...",
            root_model="offline",
            response=answer,
            execution_time=0.01,
            cost_usd=0.00042,
            ledger=ledger,
            depth=0,
            batch=1,
        ),
        SubCall(
            kind="rlm_query",
            prompt="child task",
            root_model="offline",
            response="child summary",
            execution_time=0.02,
            cost_usd=0.0,
            depth=0,
            child=child.trajectory,
        ),
    ]
    stdout = f"[Hit(document='3M_2018_10K', page={page})] {HOSTILE}"
    first.code_blocks.append(
        CodeBlock(
            "hits = search('net sales')\nprint(hits)",
            CellResult(stdout=stdout, execution_time=0.05, sub_calls=calls),
        )
    )
    first.usage = TurnUsage(900, 40, 0.001)
    t.close(first)
    second = t.iteration([{"role": "user", "content": "REPL output: ..."}])
    second.response = "FINAL_VAR(final_answer)"
    second.final_answer = answer
    t.close(second)
    pred = Prediction(
        question=question,
        answer=[answer],
        citations=[{"file": "3M_2018_10K", "page": page}],
        steps=2,
        sub_calls=2,
        input_tokens=1020,
        output_tokens=49,
        cost_usd=0.00142,
        wall_s=0.4,
        question_id=qid,
        trajectory=str(path),
    )
    t.result(Result.from_dict(pred.to_madqa()))
    return t.write(path)


def make_run(run_dir: Path) -> Path:
    """An eval run directory: results.jsonl (predictions + scores) and trajectories/."""
    logs = run_dir / "trajectories"
    rows = []
    for qid, answer, page, correct in (
        ("fb-1", "$32,765 million", 3, True),
        ("fb-2", "1.2%", 7, False),
    ):
        log = make_trajectory(logs / f"rlm_{qid}.jsonl", qid, f"Question {qid}?", answer, page)
        record = json.loads(log.read_text().splitlines()[-1])
        record = {k: v for k, v in record.items() if k not in ("type", "timestamp")}
        record["trajectory"] = f"trajectories/{log.name}"
        scores = {"score": float(correct), "anls": 1.0 if correct else 0.2}
        rows.append(record | scores | {"correct": correct})
    rows.append(
        {
            "id": "fb-3",
            "question": "Lost log?",
            "answer": [],
            "citations": [],
            "trajectory": "trajectories/missing.jsonl",
            "score": 0.0,
            "correct": False,
        }
    )
    (run_dir / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return run_dir


def embedded_data(page: str) -> dict:
    match = re.search(r'<script type="application/json" id="rlm-data">(.*?)</script>', page, re.S)
    assert match, "data element missing"
    return json.loads(match.group(1))


def test_run_directory_joins_results_with_trajectories(tmp_path):
    data = load_source(make_run(tmp_path / "run"))
    assert data["kind"] == "run"
    ids = [q["id"] for q in data["questions"]]
    assert ids == ["fb-1", "fb-2", "fb-3"]
    first, second, lost = data["questions"]
    assert first["correct"] is True and first["score"] == 1.0
    assert second["correct"] is False
    assert first["answer"] == ["$32,765 million"]
    assert first["citations"] == [{"file": "3M_2018_10K", "page": 3}]
    assert [it["iteration"] for it in first["trajectory"]["iterations"]] == [1, 2]
    calls = first["trajectory"]["iterations"][0]["code_blocks"][0]["result"]["rlm_calls"]
    assert [c["kind"] for c in calls] == ["llm_query", "rlm_query"]
    assert calls[1]["children"][0]["type"] == "metadata"
    assert lost["trajectory"] is None and "missing.jsonl" in lost["trajectory_error"]
    s = data["summary"]
    assert (s["questions"], s["scored"], s["correct"]) == (3, 3, 1)
    assert s["accuracy"] == pytest.approx(1 / 3)
    assert s["cost_usd"] == pytest.approx(2 * 0.00142)
    assert s["sub_calls"] == 4


def test_run_being_written_shows_its_complete_lines(tmp_path):
    run_dir = make_run(tmp_path / "run")
    results = run_dir / "results.jsonl"
    with open(results, "a") as fh:
        fh.write('{"id": "fb-4", "question": "half writ')  # killed or still writing
    assert [q["id"] for q in load_source(run_dir)["questions"]] == ["fb-1", "fb-2", "fb-3"]
    lines = results.read_text().splitlines()
    results.write_text("\n".join([lines[0], "{broken", *lines[1:]]) + "\n")
    with pytest.raises(DatasetError, match="results.jsonl:2: invalid JSON"):
        load_source(run_dir)  # damage in the middle is an error, not silently skipped


def test_single_trajectory_file(tmp_path):
    log = make_trajectory(tmp_path / "t.jsonl", "q9", "How much?", "42", 5)
    data = load_source(log)
    assert data["kind"] == "trajectory"
    (q,) = data["questions"]
    assert (q["id"], q["question"], q["answer"]) == ("q9", "How much?", ["42"])
    assert q["correct"] is None
    assert q["effort"]["steps"] == 2 and q["effort"]["cost_usd"] == pytest.approx(0.00142)


def test_html_is_self_contained_and_script_text_cannot_escape(tmp_path):
    log = make_trajectory(tmp_path / "t.jsonl", "q1", "Q?", "A", 1)
    page = build_html(load_source(log))
    assert "</script><script>window.PWNED" not in page
    # exactly two closing script tags: the data element and the viewer code
    assert page.count("</script>") == 2
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    assert "Content-Security-Policy" in page
    data = embedded_data(page)
    stdout = data["questions"][0]["trajectory"]["iterations"][0]["code_blocks"][0]["result"]
    assert HOSTILE in stdout["stdout"]


def test_long_strings_are_clipped(tmp_path):
    log = tmp_path / "big.jsonl"
    t = TrajectoryWriter(Metadata(root_model="offline", question="big?"))
    it = t.iteration([])
    it.response = "x" * (MAX_STRING + 5000)
    t.close(it)
    t.result(Result(answer=["y"], citations=[]))
    t.write(log)
    response = load_source(log)["questions"][0]["trajectory"]["iterations"][0]["response"]
    assert len(response) < MAX_STRING + 100
    assert "5,000 more characters clipped" in response


def test_corpus_adds_cited_page_snippets(tmp_path):
    corpus = Corpus.from_documents(
        {"3M_2018_10K": ["cover", "intro", "Net sales were $32,765 million in 2018.", "x"]}
    )
    log = make_trajectory(tmp_path / "t.jsonl", "q1", "Q?", "$32,765 million", 3)
    out = write_viewer(log, tmp_path / "v.html", corpus=corpus)
    (cite,) = embedded_data(out.read_text())["questions"][0]["citations"]
    assert "Net sales were $32,765 million" in cite["snippet"]
    log2 = make_trajectory(tmp_path / "t2.jsonl", "q2", "Q?", "A", 9)
    out2 = write_viewer(log2, tmp_path / "v2.html", corpus=corpus)
    (bad,) = embedded_data(out2.read_text())["questions"][0]["citations"]
    assert "no page 9" in bad["snippet_error"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such run directory"),
        ("notes.txt", "expected an eval run directory or a trajectory .jsonl"),
        ("bad.jsonl", "bad.jsonl:2: invalid JSON"),
        ("nometa.jsonl", "not an rlm-docs trajectory"),
        ("emptydir", "not an eval run directory"),
    ],
)
def test_bad_sources_raise_clear_errors(tmp_path, content, message):
    src = tmp_path / (content or "absent")
    if content == "notes.txt":
        src.write_text("hello")
    elif content == "bad.jsonl":
        src.write_text('{"type": "metadata"}\n{oops\n')
    elif content == "nometa.jsonl":
        src.write_text('{"type": "iteration"}\n')
    elif content == "emptydir":
        src.mkdir()
    with pytest.raises(DatasetError, match=re.escape(message)):
        load_source(src)


def test_cli_writes_file_and_reports_errors_without_output(tmp_path, capsys):
    run_dir = make_run(tmp_path / "run")
    out = tmp_path / "out" / "view.html"
    assert main(["view", str(run_dir), "--out", str(out), "--title", "My run"]) == 0
    page = out.read_text()
    assert "<title>My run</title>" in page
    assert [q["id"] for q in embedded_data(page)["questions"]] == ["fb-1", "fb-2", "fb-3"]
    assert "wrote" in capsys.readouterr().out

    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    target = tmp_path / "never.html"
    assert main(["view", str(bad), "--out", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rlm-docs view: error:") and "bad.jsonl:1" in err
    assert not target.exists()
    assert main(["view", str(run_dir), "--out", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err


def make_eval_run(root: Path) -> Path:
    """A real run directory from `run_eval` (rlm system, offline model) over a tiny corpus."""
    from rlm_docs.eval.runner import EvalSettings, run_eval
    from rlm_docs.governor import Budget

    store = Corpus.from_documents(
        {
            "3M_2018_10K": ["cover", "Capital expenditure was $1,577 million in 2018."],
            "AMD_2019_10K": ["AMD revenue was $6.73 billion in 2019."],
        }
    ).save(root / "store")
    questions = root / "questions.jsonl"
    rows = [
        ("a", "What was 3M's capital expenditure in 2018?", "$1,577 million", "3M_2018_10K", 2),
        ("b", "What was AMD revenue in 2019?", "$6.73 billion", "AMD_2019_10K", 1),
    ]
    questions.write_text(
        "".join(
            json.dumps(
                {
                    "id": qid,
                    "question": q,
                    "answer_variants": [[a]],
                    "evidence": [{"document": doc, "page": page}],
                }
            )
            + "\n"
            for qid, q, a, doc, page in rows
        )
    )
    settings = EvalSettings(
        dataset=questions,
        corpus=store,
        system="rlm",
        model="offline",
        out=root / "run",
        budget=Budget(max_steps=4),
        workers=1,
        progress=False,
    )
    run_eval(settings)
    return root / "run"


def test_real_eval_run_directory(tmp_path):
    run_dir = make_eval_run(tmp_path)
    out = write_viewer(run_dir, tmp_path / "v.html")
    data = embedded_data(out.read_text())
    assert data["run"]["system"] == "rlm" and data["run"]["model"] == "offline"
    by_id = {q["id"]: q for q in data["questions"]}
    assert set(by_id) == {"a", "b"}
    results = {
        r["id"]: r for r in map(json.loads, (run_dir / "results.jsonl").read_text().splitlines())
    }
    for qid, q in by_id.items():
        assert q["correct"] == results[qid]["correct"]
        assert q["answer"] == results[qid]["answer"]
        assert q["trajectory_error"] is None and q["trajectory"]["iterations"]
        assert [e["call_id"] for e in q["ledger"]] == [e["call_id"] for e in results[qid]["ledger"]]
        # cited pages quoted from the corpus recorded in run.json
        assert q["citations"] and all("snippet" in c for c in q["citations"])
    assert "6.73 billion" in by_id["b"]["citations"][0]["snippet"]
    assert data["summary"]["correct"] == sum(r["correct"] for r in results.values())


def test_a_run_json_naming_another_store_does_not_pull_its_pages(tmp_path, capsys):
    run_dir = make_eval_run(tmp_path)
    manifest = json.loads((run_dir / "run.json").read_text())
    assert manifest["corpus_sha256"] == fingerprint(tmp_path / "store")
    secret = "The private merger closes on 3 March; page 2 of AMD_2019_10K says so."
    private = Corpus.from_documents({"3M_2018_10K": ["x", secret], "AMD_2019_10K": [secret]}).save(
        tmp_path / "private"
    )
    # someone else's run directory whose run.json names a store of this machine
    (run_dir / "run.json").write_text(json.dumps(manifest | {"corpus": str(private)}))
    html = write_viewer(run_dir, tmp_path / "v.html").read_text()
    cited = [c for q in embedded_data(html)["questions"] for c in q["citations"]]
    assert "private merger" not in html and cited and not any("snippet" in c for c in cited)
    # a run that recorded no fingerprint: its corpus (here the genuine one) is not used either
    del manifest["corpus_sha256"]
    (run_dir / "run.json").write_text(json.dumps(manifest))
    html = write_viewer(run_dir, tmp_path / "w.html").read_text()
    cited = [c for q in embedded_data(html)["questions"] for c in q["citations"]]
    assert cited and not any("snippet" in c for c in cited)
    # the store the user names is used
    assert (
        main(["view", str(run_dir), "--out", str(tmp_path / "x.html"), "--corpus", str(private)])
        == 0
    )
    assert "private merger" in (tmp_path / "x.html").read_text()


def test_resuming_a_run_without_a_fingerprint_records_one(tmp_path):
    from rlm_docs.eval.runner import EvalSettings, run_eval

    run_dir = make_eval_run(tmp_path)
    manifest = json.loads((run_dir / "run.json").read_text())
    del manifest["corpus_sha256"]
    (run_dir / "run.json").write_text(json.dumps(manifest))
    settings = EvalSettings(
        dataset=tmp_path / "questions.jsonl", corpus=tmp_path / "store", system="rlm",
        model="offline", out=run_dir, budget=Budget(max_steps=4), workers=1, progress=False,
        resume=True,
    )  # fmt: skip
    run_eval(settings)
    recorded = json.loads((run_dir / "run.json").read_text())["corpus_sha256"]
    assert recorded == fingerprint(tmp_path / "store")


def test_api_keys_in_old_logs_are_masked(tmp_path, monkeypatch):
    secret = "sk-test-0123456789abcdefghij"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    log = tmp_path / "raw.jsonl"
    records = [
        {"type": "metadata", "question": "q?", "root_model": "openai:x"},
        {"type": "iteration", "iteration": 1, "response": f"my key is {secret}", "code_blocks": []},
        {"type": "result", "answer": ["a"], "citations": [], "error": f"auth failed for {secret}"},
    ]
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    page = write_viewer(log, tmp_path / "v.html").read_text()
    assert secret not in page and "[REDACTED]" in page


def test_partial_credit_accuracy_is_the_mean_score_as_eval_states_it(tmp_path):
    run_dir = make_run(tmp_path / "run")
    results = run_dir / "results.jsonl"
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    for row, score in zip(rows, (1.0, 0.31640625, 0.0), strict=True):
        row["score"] = score  # an OOLONG count off by 4 gets 0.75^4
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    s = load_source(run_dir)["summary"]
    assert s["accuracy"] == pytest.approx((1.0 + 0.31640625) / 3)
    assert (s["correct"], s["scored"], s["partial_credit"]) == (1, 3, True)
