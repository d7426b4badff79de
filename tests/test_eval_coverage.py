"""What a baseline read is part of its result: eval's line, the report's comparison table and
its notes say how much of the corpus long-context and map-reduce saw, and a reading cut by a
budget ends as that budget's stop (`forced` on the axis), not as `final`."""

import json

import pytest

from rlm_docs.cli import main
from rlm_docs.corpus import Corpus
from rlm_docs.eval.report import MAIN_HEADERS
from tests.fixtures.eval.support import QUESTIONS, build_store, fake_model, server_env
from tests.servers.chat import ChatServer

pytestmark = pytest.mark.usefixtures(server_env.__name__)


def _rows(out):
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def test_baselines_say_what_they_read_in_eval_and_report(tmp_path, capsys):
    store = build_store(tmp_path / "store")
    pages = Corpus.load(store).total_pages
    with ChatServer(reply=fake_model) as server:
        common = [
            "eval", "--dataset", str(QUESTIONS), "--corpus", str(store), "--no-progress",
            "--model", f"openai:gpt-4o-mini@{server.base_url}",
        ]  # fmt: skip
        lc, mr = tmp_path / "lc", tmp_path / "mr"
        assert main([*common, "--system", "long-context", "--max-input-tokens", "600",
                     "--out", str(lc)]) == 0  # fmt: skip
        lc_line = capsys.readouterr().out
        assert main([*common, "--system", "map-reduce", "--chunk-tokens", "64",
                     "--max-sub-calls", "3", "--out", str(mr)]) == 0  # fmt: skip
        mr_line = capsys.readouterr().out
    lc_rows, mr_rows = _rows(lc), _rows(mr)
    kept = {r["info"]["context"]["pages_kept"] for r in lc_rows}
    assert max(kept) < pages and {r["stop_reason"] for r in lc_rows} == {"forced"}
    assert {r["stop_axis"] for r in lc_rows} == {"input_tokens"}
    share = sum(r["info"]["context"]["pages_kept"] for r in lc_rows) / (pages * len(lc_rows))
    read = f"{min(kept)}" if len(kept) == 1 else f"{min(kept)}-{max(kept)}"
    sentence = (
        f"long-context saw {share:.1%} of the corpus ({read} of {pages} pages; truncated by "
        "max_input_tokens in 6 of 6 questions)"
    )
    assert sentence in lc_line

    chunks = {r["info"]["map"]["chunks"] for r in mr_rows}.pop()
    assert {(r["stop_reason"], r["stop_axis"]) for r in mr_rows} == {("forced", "sub_calls")}
    assert {r["info"]["map"]["read"] for r in mr_rows} == {3}
    assert (
        f"map-reduce saw {3 / chunks:.1%} of the corpus (3 of {chunks} chunks; cut short by "
        "sub_calls in 6 of 6 questions)"
    ) in mr_line

    assert main(["report", str(lc), str(mr), "--out", str(tmp_path / "report")]) == 0
    report = capsys.readouterr().out
    seen = MAIN_HEADERS.index("Corpus seen")
    cells = {
        line.split()[1]: line.strip("|").split(" | ")[seen].strip()
        for line in report.splitlines()
        if line.startswith(("| long-context", "| map-reduce"))
    }
    assert cells == {
        "long-context": f"{share:.1%} (truncated)",
        "map-reduce": f"{3 / chunks:.1%} (cut by sub_calls)",
    }
    assert f": {sentence}." in report
    md = (tmp_path / "report" / "report.md").read_text()
    assert f": {sentence}." in md and "| Corpus seen |" in md
