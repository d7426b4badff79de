"""A remote worker's trajectory scratch directory exists only while its questions run: Ray
kills actors without exit handlers, so nothing may be left in the nodes' temp directories."""

import tempfile

import pytest

from rlm_docs.eval.dataset import load_questions
from rlm_docs.eval.question_task import QuestionTask
from tests.fixtures.eval.support import QUESTIONS, build_store, fake_model, server_env
from tests.servers.chat import ChatServer

pytestmark = pytest.mark.usefixtures(server_env.__name__)  # test key, private home, no cache


def test_a_remote_task_leaves_no_scratch_directory(tmp_path, monkeypatch) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    store = build_store(tmp_path / "store")
    with ChatServer(reply=fake_model) as srv:
        task = QuestionTask(
            corpus=str(store), system="static-rag", model=f"openai:fake@{srv.base_url}"
        )
        task.build()
        assert list(scratch.glob("rlm-eval-traj-*")) == []
        records = [task(q) for q in load_questions(QUESTIONS)[:2]]
    assert all(r["trajectory_jsonl"] and r["status"] == "ok" for r in records)
    assert list(scratch.glob("rlm-eval-traj-*")) == []
