"""`rlm-docs bench make`: deterministic output, token targets, and gold that the test recomputes
on its own from the generated corpus text and the fixture's labels."""

import json
import re
from collections import Counter
from datetime import date, datetime
from pathlib import Path

import pytest

from rlm_docs.cli import main
from rlm_docs.corpus import Corpus
from rlm_docs.tokens import count_tokens

FIXTURE = Path(__file__).parent / "fixtures" / "bench" / "trec_small.jsonl"
LINE = re.compile(r"^Date: (\w{3} \d{2}, \d{4}) \|\| User: (\d+) \|\| Instance: (.+)$", re.M)


def _labels() -> dict[str, str]:
    rows = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    return {r["input"]: r["label"] for r in rows}


def _rows(store: Path) -> list[tuple[date, int, str]]:
    """(day, user, gold label) of every line, read back from the corpus text."""
    corpus = Corpus.load(store)
    text = "".join(
        corpus.page(d, n) for d in corpus.names for n in range(1, corpus.num_pages(d) + 1)
    )
    labels = _labels()
    return [
        (datetime.strptime(d, "%b %d, %Y").date(), int(u), labels[t])
        for d, u, t in LINE.findall(text)
    ]


def _files(root: Path) -> dict[str, bytes]:
    # The BM25 index is a derived cache whose vocabulary order follows Python's string hashing
    # (it differs between processes); everything a system reads or scores is compared.
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "bm25" not in p.parts
    }


def _make(tmp: Path, kind: str, *args: str) -> Path:
    out = tmp / kind
    data = [] if kind == "needle" else ["--data", str(FIXTURE)]
    assert main(["bench", "make", kind, "--out", str(out), *data, *args]) == 0
    return out


@pytest.fixture(scope="module")
def oolong_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _make(tmp_path_factory.mktemp("o"), "oolong", "--tokens", "2^11", "4096", "--seed", "5")


def test_same_seed_same_bytes_other_seed_other_window(tmp_path: Path, oolong_dir: Path) -> None:
    again = _make(tmp_path / "a", "oolong", "--tokens", "2048", "4096", "--seed", "5")
    assert _files(again) == _files(oolong_dir)
    other = _make(tmp_path / "b", "oolong", "--tokens", "2048", "--seed", "6")
    assert (other / "2048" / "questions.jsonl").read_bytes() != (
        oolong_dir / "2048" / "questions.jsonl"
    ).read_bytes()


def test_token_counts_fit_the_targets_and_are_reported(oolong_dir: Path) -> None:
    manifest = json.loads((oolong_dir / "manifest.json").read_text())
    assert manifest["generator"] == "rlm-docs.bench" and manifest["seed"] == 5
    for part in manifest["parts"]:
        corpus = Corpus.load(oolong_dir / part["corpus"])
        text = "".join(
            corpus.page(d, n) for d in corpus.names for n in range(1, corpus.num_pages(d) + 1)
        )
        assert part["text_tokens"] == count_tokens(text)
        assert 0.9 * part["tokens"] <= part["text_tokens"] <= part["tokens"]
        assert part["rendered_tokens"] == count_tokens(corpus.render())
        assert part["entries"] == len(LINE.findall(text))
        # The labels are never in the context.
        assert "|| Label" not in text
        assert text.startswith(f"The following lines contain {part['entries']} general")
        assert text.endswith("Calculate the exact answer given these datapoints.\n\n")


def _subset(rows: list, question: str) -> list:
    user = re.search(r"associated with user IDs (\d+)\.", question)
    if user:
        return [r for r in rows if r[1] == int(user.group(1))]
    month = re.search(r"occur in (\w+) of any year", question)
    if month:
        number = datetime.strptime(month.group(1), "%B").month
        return [r for r in rows if r[0].month == number]
    span = re.search(
        r"occur between (\w{3} \d{2}, \d{4}) and (\w{3} \d{2}, \d{4}), inclusive", question
    )
    if span:
        lo, hi = (datetime.strptime(s, "%b %d, %Y").date() for s in span.groups())
        return [r for r in rows if lo <= r[0] <= hi]
    assert question.startswith("In the above data,")
    return rows


def _expected(rows: list, question: str) -> str:
    if "which user is represented most often?" in question:
        (top, n), (_, second) = Counter(user for _, user, _ in rows).most_common(2)
        assert n > second
        return str(top)
    wanted = re.search(r"which user has the most instances with the label ([a-z ]+)\?", question)
    if wanted:
        users = Counter(user for _, user, label in rows if label == wanted.group(1))
        (top, n), (_, second) = users.most_common(2)
        assert n > second
        return str(top)
    counts = Counter(label for _, _, label in _subset(rows, question))
    asked = re.search(r"classified as label '([^']+)'", question)
    if asked:
        return str(counts[asked.group(1)])
    pair = re.search(r"is label '([^']+)' more common.* as label '([^']+)'\?", question)
    if pair:
        a, b = counts[pair.group(1)], counts[pair.group(2)]
        return "more common than" if a > b else "less common than" if a < b else "same frequency as"
    ranked = counts.most_common()
    if "the most common?" in question:
        assert ranked[0][1] > ranked[1][1]
        return ranked[0][0]
    assert "the least common?" in question
    assert ranked[-1][1] < ranked[-2][1]
    return ranked[-1][0]


def test_oolong_gold_recomputed_from_corpus_and_labels(oolong_dir: Path) -> None:
    families = Counter()
    for length in ("2048", "4096"):
        rows = _rows(oolong_dir / length / "corpus")
        questions = [
            json.loads(x)
            for x in (oolong_dir / length / "questions.jsonl").read_text().splitlines()
        ]
        assert len(questions) == 20
        for q in questions:
            assert q["answer_variants"] == [[_expected(rows, q["question"])]], q["question"]
            assert q["scorer"] == "oolong" and q["evidence"] == []
            families[q["question_type"]] += 1
    assert {
        "count",
        "most_common",
        "comparison",
        "count_by_user",
        "count_by_month",
        "top_user",
        "top_user_for_label",
    } <= set(families)


# Task predicates written out independently of the generator, from the paper's wording.
D, E, H = "description and abstract concept", "entity", "human being"
N, L, A = "numeric value", "location", "abbreviation"
CUT = {
    4: date(2023, 1, 6),
    5: date(2023, 3, 15),
    7: date(2023, 2, 1),
    9: date(2023, 4, 10),
    10: date(2023, 5, 20),
}
SYMMETRIC = {
    1: lambda c, d: c[N] + c[L] >= 1,
    2: lambda c, d: c[E] + c[H] >= 1,
    3: lambda c, d: c[D] + c[A] >= 1,
    4: lambda c, d: c[H] + c[L] >= 1 and all(x > CUT[4] for x in d[H]),
    5: lambda c, d: c[E] + c[N] >= 1 and all(x < CUT[5] for x in d[E]),
    6: lambda c, d: c[L] + c[A] >= 1,
    7: lambda c, d: c[D] + c[N] >= 1 and all(x > CUT[7] for x in d[N]),
    8: lambda c, d: c[H] + c[D] >= 1,
    9: lambda c, d: c[E] + c[L] >= 1 and all(x > CUT[9] for x in d[L]),
    10: lambda c, d: c[N] + c[A] >= 1 and all(x < CUT[10] for x in d[A]),
}
ROLES = {
    11: (lambda c: c[E] >= 1 and c[A] >= 1, lambda c: c[E] == 1),
    12: (lambda c: c[N] >= 2, lambda c: c[L] >= 1 and c[H] >= 1),
    13: (lambda c: c[D] == 1, lambda c: c[A] >= 1 and c[E] >= 1),
    14: (lambda c: c[H] >= 1 and c[N] >= 1, lambda c: c[L] == 2),
    15: (lambda c: c[E] >= 1 and c[L] >= 1 and c[A] >= 1, lambda c: c[N] == 1),
    16: (lambda c: c[D] >= 1 and c[H] >= 1, lambda c: c[E] >= 2 and c[A] == 1),
    17: (lambda c: c[N] == 1, lambda c: c[L] >= 1 and c[D] >= 1),
    18: (lambda c: c[A] >= 1 and c[H] == 1, lambda c: c[E] >= 1 and c[N] >= 1),
    19: (lambda c: c[L] >= 2 and c[E] >= 1, lambda c: c[D] == 1 and c[A] == 1),
    20: (lambda c: c[N] >= 1 and c[H] >= 1, lambda c: c[L] >= 1 and c[E] >= 1 and c[A] == 1),
}


def test_pairs_gold_recomputed_from_corpus_and_labels(tmp_path: Path) -> None:
    out = _make(tmp_path, "oolong-pairs", "--tokens", "4096", "--seed", "2")
    rows = _rows(out / "4096" / "corpus")
    counts: dict[int, Counter] = {}
    days: dict[int, dict[str, list[date]]] = {}
    for day, user, label in rows:
        counts.setdefault(user, Counter())[label] += 1
        days.setdefault(user, {lb: [] for lb in (D, E, H, N, L, A)})[label].append(day)
    users = sorted(counts)
    questions = [json.loads(x) for x in (out / "4096" / "questions.jsonl").read_text().splitlines()]
    assert len(questions) == 20
    sizes = []
    for task, q in enumerate(questions, 1):
        if task in SYMMETRIC:
            ok = [u for u in users if SYMMETRIC[task](counts[u], days[u])]
            gold = {(a, b) for a in ok for b in ok if a < b}
        else:
            first, second = ROLES[task]
            gold = {
                (a, b)
                for a in users
                for b in users
                if a < b
                and (
                    (first(counts[a]) and second(counts[b]))
                    or (first(counts[b]) and second(counts[a]))
                )
            }
        written = q["answer_variants"][0]
        expected = [f"({a}, {b})" for a, b in sorted(gold)] or ["none"]
        assert written == expected, task
        assert q["scorer"] == "oolong-pairs" and q["gold_pairs"] == len(gold)
        sizes.append(len(gold))
    assert max(sizes) > 10 and min(sizes) < max(sizes)  # a real spread of answer sizes


def test_needle_facts_are_planted_once_where_the_evidence_says(tmp_path: Path) -> None:
    pages = [
        f"Report {i}.\nThe harbour authority met on day {i} to discuss dredging and tariffs.\n" * 12
        for i in range(30)
    ]
    filler = Corpus.from_documents({"minutes": pages}).save(tmp_path / "filler")
    args = ["--tokens", "2^13", "--filler", str(filler), "--questions", "4", "--needles", "3"]
    out = _make(tmp_path, "needle", *args)
    again = _make(tmp_path / "again", "needle", *args)
    assert _files(out) == _files(again)
    corpus = Corpus.load(out / "8192" / "corpus")
    questions = [json.loads(x) for x in (out / "8192" / "questions.jsonl").read_text().splitlines()]
    assert len(questions) == 4
    seen_values = set()
    for q in questions:
        keys = re.findall(r"\b[a-z]+-[a-z]+\b", q["question"])
        values = q["answer_variants"][0]
        assert len(keys) == len(values) == len(q["evidence"]) == 3
        for key, value, ev in zip(keys, values, q["evidence"], strict=True):
            hits = [
                (d, n)
                for d in corpus.names
                for n in range(1, corpus.num_pages(d) + 1)
                if key in corpus.page(d, n)
            ]
            assert hits == [(ev["document"], ev["page"])]
            assert f"The special magic number for {key} is {value}." in corpus.page(*hits[0])
            seen_values.add(value)
    assert len(seen_values) == 12
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["parts"][0]["text_tokens"] <= 8192


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys) -> None:
    missing = tmp_path / "nope.jsonl"
    assert (
        main(["bench", "make", "oolong", "--out", str(tmp_path / "o"), "--data", str(missing)]) == 2
    )
    assert capsys.readouterr().err.strip() == (
        f"rlm-docs bench make: error: {missing}: TREC-coarse file not found"
    )
    assert not (tmp_path / "o").exists()
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"input": "Who ?", "label": "human being"}\n{"input": "x", "label": "person"}\n'
    )
    assert main(["bench", "make", "oolong", "--out", str(tmp_path / "o"), "--data", str(bad)]) == 2
    assert f"{bad}:2: field 'label' must be one of" in capsys.readouterr().err
    keep = tmp_path / "keep"
    keep.mkdir()
    (keep / "notes.txt").write_text("mine")
    assert main(["bench", "make", "oolong", "--out", str(keep), "--data", str(FIXTURE)]) == 2
    assert "is not a bench output" in capsys.readouterr().err
    assert (keep / "notes.txt").read_text() == "mine"
    assert main(["bench", "make", "oolong", "--out", str(keep), "--tokens", "100"]) == 2
    assert "--tokens 100: must be between 1024" in capsys.readouterr().err
