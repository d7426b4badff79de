"""benchmarks/bench_anchors.py, as docs/benchmarks.md shows it: every part runs end to end on a
small data set laid out like FinanceBench's and prints its ratio to the anchor, and the command
exits cleanly when the data set is absent."""

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"
SCRIPT = ROOT / "benchmarks" / "bench_anchors.py"


def documented_command() -> list[str]:
    """The benchmark command of docs/benchmarks.md (its first ```bash block)."""
    block = re.search(r"^```bash\n(.*?)^```", DOC.read_text(encoding="utf-8"), re.M | re.S)
    assert block is not None, "docs/benchmarks.md shows no ```bash command"
    words = block.group(1).split()
    assert words[:2] == ["python", "benchmarks/bench_anchors.py"]
    return [sys.executable, str(ROOT / words[1]), *words[2:]]


def run(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=600)


def small_data_set(root: Path) -> Path:
    """Three filings as pdftotext output (pages split by form feeds), metadata, questions."""
    text = root / "text"
    text.mkdir(parents=True)
    lines = {
        "ACME_2020_10K": ["Acme Corp annual report 2020", "Revenue was 120 million dollars"],
        "ACME_2021_10K": ["Acme Corp annual report 2021", "Revenue grew to 150 million"],
        "GLOBEX_2021_10K": ["Globex Inc annual report", "Capital expenditures were 30 million"],
    }
    for name, pages in lines.items():
        body = "\f".join(f"{p}\nmore words on page {i}" for i, p in enumerate(pages * 5, 1))
        (text / f"{name}.txt").write_text(body + "\f", encoding="utf-8")
    rows = [{"doc_name": n, "company": n.split("_")[0].title()} for n in lines]
    (root / "documents.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    questions = [
        {"id": "q1", "question": "What was Acme's revenue in FY2021?", "evidence": []},
        {"id": "q2", "question": "How much were Globex capital expenditures?", "evidence": []},
    ]
    (root / "questions.dev.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions))
    return root


def test_every_part_prints_its_ratio_to_the_anchor(tmp_path: Path) -> None:
    data = small_data_set(tmp_path / "data")
    command = documented_command()
    command[command.index("--data") + 1] = str(data)
    result = run([*command, "--rounds", "1", "--cells", "50"])
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for part in ("ingest", "search", "cell"):
        line = re.search(rf"^{part}\s+(\d+\.\d+)x .*rlm-docs .* anchor .* load \d", out, re.M)
        assert line is not None, f"no {part} ratio in:\n{out}"
        assert float(line.group(1)) > 0
    assert re.search(r"^fork\s+\d+\.\d+ s .*corpus_load", out, re.M), out


def test_absent_data_set_is_a_message_not_a_failure(tmp_path: Path) -> None:
    result = run([sys.executable, str(SCRIPT), "--data", str(tmp_path / "missing")])
    assert result.returncode == 0
    assert "nothing to measure" in result.stdout


def test_a_store_that_is_not_there_is_one_line_and_exit_2(tmp_path: Path) -> None:
    data = small_data_set(tmp_path / "data")
    missing = tmp_path / "no-store"
    result = run([sys.executable, str(SCRIPT), "--data", str(data), "--store", str(missing)])
    assert result.returncode == 2
    last = result.stderr.splitlines()[-1]
    assert last.endswith(
        f"--store {missing}: no corpus store there (write one with `rlm-docs ingest`)"
    )
    assert "Traceback" not in result.stderr
