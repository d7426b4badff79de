"""rlms logs in and out: an rlms log (written by the official rlms logger) reads as a
trajectory and writes back as the same records; an rlm-docs trajectory (nested child runs
included) exports to records rlms' own types parse, and reads back with the same turns;
`rlm-docs view` opens an rlms log and `rlm-docs export --format rlms` converts a run."""

import json
from pathlib import Path

import pytest

from rlm_docs.cli import main
from rlm_docs.engine.rlms_log import is_rlms_log, to_rlms
from rlm_docs.engine.trajectory import load_trajectory

NATIVE = Path(__file__).parent / "fixtures" / "trajectories" / "v1_nested.jsonl"


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def rlms_log(tmp_path_factory) -> Path:
    """A log the official rlms logger wrote for a run through the sandbox environment."""
    pytest.importorskip("rlm", reason="the 'rlms' extra (the rlms package) is not installed")
    pytest.importorskip("uvicorn", reason="the 'serve' extra (fastapi, uvicorn) is not installed")
    from rlm import RLM
    from rlm.logger import RLMLogger

    from rlm_docs.corpus import Corpus
    from rlm_docs.proxy import MeteringProxy
    from rlm_docs.rlms import ENVIRONMENT, register
    from tests.fixtures.eval.support import DOCS
    from tests.fixtures.rlms_model import rlms_model
    from tests.servers.chat import ChatServer

    register()
    out = tmp_path_factory.mktemp("rlms-logs")
    server = ChatServer(reply=rlms_model).start()
    try:
        with MeteringProxy(f"openai:m@{server.base_url}", cache=False) as proxy:
            kwargs = {"model_name": "m", "base_url": proxy.base_url, "api_key": "x"}
            RLM(
                backend="openai",
                backend_kwargs=kwargs,
                environment=ENVIRONMENT,
                logger=RLMLogger(log_dir=str(out)),
            ).completion(
                Corpus.from_documents(DOCS).render(),
                root_prompt="What was Acme revenue for fiscal 2022?",
            )
    finally:
        server.stop()
    (log,) = out.glob("*.jsonl")
    return log


def test_rlms_log_reads_as_a_trajectory_and_writes_back_unchanged(rlms_log):
    original = _records(rlms_log)
    assert is_rlms_log(original)
    traj = load_trajectory(rlms_log)
    assert traj.metadata.environment_type == "rlm-docs-sandbox"
    assert [len(it.code_blocks) for it in traj.iterations] == [1, 1]
    # a turn keeps only what it added: the previous reply is not repeated in its prompt
    second = traj.iterations[1].prompt
    assert [m["role"] for m in second] == ["user", "user"]
    assert second[0]["content"].startswith("REPL output:")
    (call,) = traj.iterations[0].sub_calls
    assert call.prompt.startswith("Answer from this page.") and call.depth == 0
    assert traj.result.answer.endswith("[acme_2022_10k page 2]")
    assert (traj.result.steps, traj.result.sub_calls) == (2, 1)
    assert traj.metadata.question == "What was Acme revenue for fiscal 2022?"
    assert to_rlms(traj) == original


def test_native_trajectory_exports_to_records_rlms_types_parse():
    pytest.importorskip("rlm", reason="the 'rlms' extra (the rlms package) is not installed")
    from rlm.core.types import RLMChatCompletion, RLMMetadata

    native = load_trajectory(NATIVE)
    records = to_rlms(native)
    meta = {k: v for k, v in records[0].items() if k not in ("type", "timestamp")}
    RLMMetadata(**meta)  # every rlms metadata field, and no other
    calls = [
        RLMChatCompletion.from_dict(c)
        for r in records[1:]
        for b in r["code_blocks"]
        for c in b["result"]["rlm_calls"]
    ]
    child = [c for c in calls if c.metadata]
    assert len(child) == 1 and child[0].metadata["iterations"]
    # The history rlms expects: each prompt extends the previous one with its reply.
    for before, after in zip(records[1:], records[2:], strict=False):
        n = len(before["prompt"])
        assert after["prompt"][:n] == before["prompt"]
        assert after["prompt"][n] == {"role": "assistant", "content": before["response"]}
    back = load_trajectory_from(records)
    assert [it.response for it in back.iterations] == [it.response for it in native.iterations]
    assert [it.prompt for it in back.iterations] == [it.prompt for it in native.iterations]
    assert [b.result.stdout for b in back.code_blocks] == [
        b.result.stdout for b in native.code_blocks
    ]
    nested = [c for c in back.own_sub_calls() if c.child is not None]
    original = [c for c in native.own_sub_calls() if c.child is not None]
    assert [c.child.iterations[0].response for c in nested] == [
        c.child.iterations[0].response for c in original
    ]
    assert nested[0].child.depth == 1


def load_trajectory_from(records: list[dict]):
    from rlm_docs.engine.rlms_log import from_rlms_records

    return from_rlms_records(records)


def test_export_command_and_view_of_an_rlms_log(rlm_home, tmp_path, rlms_log, capsys, monkeypatch):
    from tests.fixtures.eval.support import QUESTIONS, build_store

    monkeypatch.setenv("RLM_DOCS_CACHE", "off")
    store = build_store(tmp_path / "store")
    run = tmp_path / "run"
    args = ["eval", "--dataset", str(QUESTIONS), "--corpus", str(store), "--system", "rlm"]
    assert (
        main([*args, "--model", "offline", "--out", str(run), "--limit", "2", "--no-progress"]) == 0
    )
    assert main(["export", str(run), "--format", "rlms", "--out", str(tmp_path / "out")]) == 0
    logs = sorted((run / "trajectories").glob("*.jsonl"))
    assert len(logs) == 2
    for log in logs:
        assert _records(tmp_path / "out" / log.name) == to_rlms(load_trajectory(log))
    # one trajectory file converts too, and reads back with the same turns
    assert main(["export", str(NATIVE), "--format", "rlms", "--out", str(tmp_path / "one")]) == 0
    back = load_trajectory(tmp_path / "one" / NATIVE.name)
    assert [it.response for it in back.iterations] == [
        it.response for it in load_trajectory(NATIVE).iterations
    ]
    assert main(["view", str(rlms_log), "--out", str(tmp_path / "view.html")]) == 0
    page = (tmp_path / "view.html").read_text()
    assert "Answer from this page." in page and "rlm-docs-sandbox" in page
    # a directory that is not a run: one line, exit 2, nothing written
    capsys.readouterr()
    code = main(
        ["export", str(tmp_path / "store"), "--format", "rlms", "--out", str(tmp_path / "x")]
    )
    assert code == 2 and len(capsys.readouterr().err.strip().splitlines()) == 1
    assert not (tmp_path / "x").exists()
