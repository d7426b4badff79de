"""The typed trajectory records: round trips, version-1 files, and bad input."""

import json
from pathlib import Path

import pytest

from rlm_docs.engine.records import (
    VERSION,
    CellResult,
    CodeBlock,
    Iteration,
    Metadata,
    Result,
    SubCall,
    Trajectory,
    TurnUsage,
)
from rlm_docs.engine.trajectory import load_trajectory
from rlm_docs.errors import DatasetError

V1 = Path(__file__).parent / "fixtures" / "trajectories" / "v1_nested.jsonl"


def _v1_records() -> list[dict]:
    return [json.loads(line) for line in V1.read_text().splitlines()]


CHILD = Trajectory(
    Metadata(root_model="m", question="sub", depth=1),
    [Iteration(iteration=1, response="FINAL(4)", final_answer="4")],
    Result(answer="4", stop_reason="final", steps=1),
)
RECORDS = [
    Metadata(root_model="m", question="q", question_id=None, budget={"max_steps": 2}, depth=0),
    Metadata(system="bm25-agent", max_iterations=10, extra={"chunk_tokens": 512}),
    TurnUsage(input_tokens=3, output_tokens=4, cost_usd=None, extra={"cached_tokens": 1}),
    SubCall(kind="llm_query", prompt="p", response=None, error="BudgetExceeded: x", depth=2),
    SubCall(kind="llm_query", prompt="p", response="r", batch=3, ledger={"call_id": 1}),
    SubCall(kind="rlm_query", prompt="sub", response="4", child=CHILD, depth=0),
    CellResult(stdout="out", stderr="err", sub_calls=[SubCall(prompt="a")], restarted=True),
    CodeBlock(code="x = 1", result=CellResult(sub_calls_omitted=5)),
    Iteration(iteration=2, forced=True, confirmation=True, usage=TurnUsage(1, 2, 0.5)),
    Iteration(code_blocks=[CodeBlock(code="y")], extra={"search": "revenue"}),
    Result(id="q-1", answer=["a"], citations=[], stop_reason="forced", stop_axis="steps"),
    Result(answer="child text", stop_reason="budget", stop_axis="cost_usd", info={"k": 1}),
]


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: type(r).__name__)
def test_every_record_round_trips_through_json(record):
    data = json.loads(json.dumps(record.to_dict()))
    assert type(record).from_dict(data) == record
    assert type(record).from_dict(data).to_dict() == data


def test_a_trajectory_round_trips_and_its_records_say_their_type():
    traj = Trajectory(
        Metadata(question="q"),
        [Iteration(code_blocks=[CodeBlock(result=CellResult(sub_calls=[RECORDS[5]]))])],
        Result(answer=["4"], stop_reason="final"),
    )
    records = json.loads(json.dumps(traj.to_records()))
    assert [r["type"] for r in records] == ["metadata", "iteration", "result"]
    assert records[0]["version"] == VERSION == 2
    assert Trajectory.from_records(records) == traj


def test_optional_fields_are_left_out_at_their_default_and_extras_come_last():
    data = Iteration(iteration=1, extra={"search": "q"}).to_dict()
    assert "confirmation" not in data and data["forced"] is False
    assert list(data)[0] == "type" and list(data)[-1] == "search"
    call = SubCall(prompt="p").to_dict()
    assert "error" not in call and "children" not in call and call["depth"] is None


def test_a_version_1_file_loads_with_its_nested_child_run():
    traj = load_trajectory(V1)
    assert traj.metadata.version == 1 and traj.depth == 0
    first, second = traj.iterations
    assert first.extra == {"search": "a system's own key"}
    assert first.usage == TurnUsage(50, 20, 0.001, extra={"cached_tokens": 0})
    cell = first.code_blocks[0].result
    assert cell.restarted is True and cell.sub_calls_omitted == 2
    spawn, refused = cell.sub_calls
    assert spawn.kind == "rlm_query" and spawn.child is not None
    assert spawn.child.depth == 1 and spawn.child.result.answer == "4"
    assert refused.error.startswith("BudgetExceeded") and refused.prompt_chars == 25_000
    assert second.forced and second.confirmation and second.code_blocks == []
    assert traj.result.answer == ["4"] and traj.result.stop_axis is None
    assert traj.result.citation_source == "cite"


def test_version_1_sub_calls_get_the_depth_of_the_run_that_made_them():
    traj = load_trajectory(V1)
    walked = [(it.iteration, call.kind, call.depth) for it, call in traj.walk_sub_calls()]
    assert walked == [(1, "rlm_query", 0), (1, "llm_query", 1), (1, "llm_query", 0)]
    assert [c.batch for _, c in traj.walk_sub_calls()] == [None, None, None]


def test_a_version_1_file_is_written_back_as_it_was_plus_the_version_2_fields():
    original = _v1_records()
    back = load_trajectory(V1).to_records()

    def drop_v2(records):  # and a null `error`, which version 2 leaves out
        for record in records:
            record.pop("stop_axis", None)
            if record.get("error", 0) is None:
                del record["error"]
            for block in record.get("code_blocks", []):
                for call in block["result"]["rlm_calls"]:
                    call.pop("depth", None), call.pop("batch", None)
                    if "children" in call:
                        drop_v2(call["children"])
        return records

    assert back[-1]["stop_axis"] is None
    assert drop_v2(back) == drop_v2(original)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no records"),
        ('{"type": "iteration"}\n', "line 1 must be a 'metadata' record"),
        ('{"type": "metadata"}\n{"type": "iteration", "code_blocks": 3}\n', "'code_blocks'"),
        ('{"type": "metadata"}\nnot json\n', ":2: invalid JSON"),
        ('{"type": "metadata"}\n[1]\n', ":2: expected a JSON object"),
    ],
)
def test_bad_files_are_one_dataset_error_naming_the_file(tmp_path, text, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(text)
    with pytest.raises(DatasetError, match=str(path)) as err:
        load_trajectory(path)
    assert message in str(err.value)


def test_a_missing_file_is_a_dataset_error(tmp_path):
    with pytest.raises(DatasetError, match="cannot read"):
        load_trajectory(tmp_path / "absent.jsonl")
