"""`make_bench`: write a generated workload (corpus stores, questions, manifest) to a directory.

Layout, one part per token target:

    OUT/manifest.json              generator, version, kind, seed, parameters, per-part sizes
    OUT/<tokens>/corpus/           the corpus store the systems read
    OUT/<tokens>/questions.jsonl   MADQA-schema questions with exact gold

Nothing time- or machine-dependent is written, so the same parameters give the same bytes.
Each part's randomness comes from `Random("SEED:KIND:TOKENS")`, so adding a length leaves the
others unchanged. All of OUT is written in a temp directory and renamed into place at the end.
"""

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rlm_docs.atomic import atomic_directory
from rlm_docs.bench import GENERATOR, KINDS, VERSION, needle, oolong, pairs
from rlm_docs.bench.trec import Instance, load_pool
from rlm_docs.bench.window import DOCUMENT, Window, sample_window
from rlm_docs.corpus import Corpus, store
from rlm_docs.corpus.document import Document
from rlm_docs.errors import ConfigError
from rlm_docs.tokens import count_tokens

MIN_TOKENS, MAX_TOKENS = 1024, 4_194_304
MANIFEST = "manifest.json"
Part = tuple[list[Document], list[dict[str, Any]], dict[str, Any]]


def _record(qid: str, question: str, variants: list[str], **fields: Any) -> dict[str, Any]:
    return {"id": qid, "question": question, "answer_variants": [variants], **fields}


def _oolong_part(pool: list[Instance], tokens: int, rng: random.Random, count: int) -> Part:
    window = sample_window(pool, tokens, rng)
    items = oolong.select(oolong.candidates(window, rng), count, rng)
    records = [
        _record(
            f"oolong-{tokens}-{i:03d}",
            item.question,
            [item.answer],
            evidence=[],
            question_type=item.question_type,
            scorer="oolong",
            answer_type=item.answer_type,
            workload="oolong",
        )
        for i, item in enumerate(items)
    ]
    return [Document(DOCUMENT, window.pages(), source="generated")], records, _window_info(window)


def _pairs_part(pool: list[Instance], tokens: int, rng: random.Random, count: int) -> Part:
    window = sample_window(pool, tokens, rng)
    tasks = list(range(1, len(pairs.TASKS) + 1))[:count]
    records = []
    for task in tasks:
        gold = pairs.gold_pairs(window.entries, pairs.TASKS[task - 1][1])
        records.append(
            _record(
                f"oolong-pairs-{tokens}-task{task:02d}",
                pairs.question(task),
                pairs.format_pairs(gold),
                evidence=[],
                question_type="pairs_both" if task <= 10 else "pairs_one_other",
                scorer="oolong-pairs",
                gold_pairs=len(gold),
                workload="oolong-pairs",
            )
        )
    return [Document(DOCUMENT, window.pages(), source="generated")], records, _window_info(window)


def _window_info(window: Window) -> dict[str, Any]:
    return {
        "entries": len(window.entries),
        "users": len({e.user for e in window.entries}),
        "label_counts": dict(window.label_table()),
    }


def _needle_part(filler: Corpus, tokens: int, rng: random.Random, count: int, k: int) -> Part:
    reserve = count * k * 24  # room for the planted sentences
    docs = needle.build_haystack(filler, max(tokens - reserve, 1), rng)
    planted = needle.plant(docs, count * k, rng)
    records = []
    for i in range(count):
        group = planted[i * k : (i + 1) * k]
        records.append(
            _record(
                f"needle-{tokens}-{i:03d}",
                needle.question_text(group),
                [n.value for n in group],
                evidence=[{"document": n.document, "page": n.page} for n in group],
                question_type="needle" if k == 1 else "multi_needle",
                scorer="needle",
                workload="needle",
                needles=k,
            )
        )
    return docs, records, {"filler_pages": sum(len(d.pages) for d in docs)}


def check_parameters(kind: str, tokens: list[int], questions: int, needles: int) -> None:
    """ConfigError for parameters `make_bench` refuses (also used by sweeps before a dry run)."""
    if kind not in KINDS:
        raise ConfigError(f"bench kind {kind!r}: expected one of {', '.join(KINDS)}")
    for t in tokens:
        if not MIN_TOKENS <= t <= MAX_TOKENS:
            raise ConfigError(f"--tokens {t}: must be between {MIN_TOKENS} and {MAX_TOKENS}")
    if len(set(tokens)) != len(tokens):
        raise ConfigError("--tokens: each length may be given once")
    if questions < 1:
        raise ConfigError(f"--questions must be >= 1, got {questions}")
    if needles < 1:
        raise ConfigError(f"--needles must be >= 1, got {needles}")


def _check_out(out: Path) -> None:
    """Refuse to replace anything but an earlier bench output."""
    if not out.exists():
        return
    if not out.is_dir():
        raise ConfigError(f"{out}: exists and is not a directory")
    try:
        previous = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        previous = None
    if any(out.iterdir()) and not (
        isinstance(previous, dict) and previous.get("generator") == GENERATOR
    ):
        raise ConfigError(f"{out}: exists and is not a bench output; choose an empty directory")


def make_bench(
    kind: str,
    out: str | Path,
    *,
    seed: int = 0,
    tokens: list[int] | None = None,
    questions: int = 20,
    data: str | Path | None = None,
    filler: str | Path | None = None,
    needles: int = 1,
) -> dict[str, Any]:
    """Generate workload `kind` at each token target into `out`; returns the manifest."""
    targets = tokens or [8192]
    check_parameters(kind, targets, questions, needles)
    target = Path(out)
    _check_out(target)
    source: Callable[[int, random.Random], Part]
    parameters: dict[str, Any] = {"tokens": targets, "questions": questions}
    if kind == "needle":
        from rlm_docs.ingest.demo import demo_corpus_path

        store_path = Path(filler) if filler is not None else demo_corpus_path()
        filler_store = Corpus.load(store_path)
        parameters |= {"filler": str(filler) if filler else "demo", "needles": needles}

        def source(t: int, rng: random.Random) -> Part:
            return _needle_part(filler_store, t, rng, questions, needles)
    else:
        pool = load_pool(data)
        parameters["data"] = str(data) if data else "default (shared oolong-trec)"
        make = _oolong_part if kind == "oolong" else _pairs_part

        def source(t: int, rng: random.Random) -> Part:
            return make(pool, t, rng, questions)

    parts = []
    with atomic_directory(target) as tmp:
        for t in targets:
            docs, records, info = source(t, random.Random(f"{seed}:{kind}:{t}"))
            corpus_dir = tmp / str(t) / "corpus"
            store.write_store(corpus_dir, docs, {"sources": [], "warnings": [], "generated": kind})
            corpus = Corpus.load(corpus_dir)
            rendered = count_tokens(corpus.render())
            text = "".join(p for d in docs for p in d.pages)
            lines = [
                json.dumps(r | {"context_tokens": rendered, "target_tokens": t}) for r in records
            ]
            (tmp / str(t) / "questions.jsonl").write_text("\n".join(lines) + "\n")
            parts.append(
                {
                    "tokens": t,
                    "corpus": f"{t}/corpus",
                    "questions": f"{t}/questions.jsonl",
                    "num_questions": len(records),
                    "text_tokens": count_tokens(text),
                    "page_tokens": corpus.total_tokens,
                    "rendered_tokens": rendered,
                    **info,
                }
            )
        manifest = {
            "generator": GENERATOR,
            "version": VERSION,
            "kind": kind,
            "seed": seed,
            "parameters": parameters,
            "parts": parts,
        }
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest
