"""The bundled demo corpus: built once per content version, then reused.

`demo_corpus_path()` ingests `corpus/documents/` into `home_dir()/demo-<content hash>`. The
hash covers every source file's name and bytes, so an updated demo gets a fresh store. Two
processes racing to build it serialise on a lock file; the loser finds the finished store.
Building a store is ingestion, so this lives in `ingest` (the corpus package only reads stores).
"""

import fcntl
import hashlib
import os
from pathlib import Path

from rlm_docs.corpus import store
from rlm_docs.errors import CorpusError
from rlm_docs.resources import demo_corpus_dir, home_dir


def _sources() -> list[Path]:
    files = sorted((demo_corpus_dir() / "documents").glob("*.pages.json"))
    if not files:
        raise CorpusError(f"{demo_corpus_dir() / 'documents'}: demo corpus sources are missing")
    return files


def demo_content_hash() -> str:
    digest = hashlib.sha256()
    for f in _sources():
        digest.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def demo_corpus_path() -> Path:
    """Path of the demo corpus store, ingesting it on first use (safe under concurrency)."""
    target = home_dir() / f"demo-{demo_content_hash()}"
    if (target / store.MANIFEST).is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.with_name(target.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (target / store.MANIFEST).is_file():
            from rlm_docs.ingest import ingest

            ingest(_sources(), target)
    return target


DEMO = "demo"


def resolve_store(given: str | os.PathLike | None) -> Path:
    """A store argument as a path: None or `demo` is the bundled demo store (built on first
    use), unless a path named `demo` exists, which wins (it is what the user pointed at)."""
    if given is None or (str(given) == DEMO and not os.path.lexists(given)):
        from rlm_docs.output_paths import check_home

        check_home()
        return demo_corpus_path()
    return Path(given)


def demo_questions_path() -> Path:
    """The demo questions (MADQA JSONL) that go with the demo corpus."""
    return demo_corpus_dir() / "questions.jsonl"
