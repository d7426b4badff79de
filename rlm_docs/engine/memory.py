"""Corpus memory across questions (opt-in): sub-call replies reused, and notes the model keeps.

Why: questions over one corpus repeat work. Later questions send byte-identical sub-prompts
(the same window classified again) and rediscover where things are. With a memory, a sub-call
whose model and exact prompt were answered before returns that reply without a model call (it
is counted as reused, not as spend), and `note(text, pages)` / `notes(query)` let the model
leave findings, with the pages they rest on and the question they came from, for later ones.

One SQLite file per corpus, named by the store's `fingerprint`, so notes and replies never
cross corpora, and a changed store starts an empty memory. SQLite serialises writers across
threads and processes, so the workers of one eval may share a memory; each question takes
the next number of the memory's `questions` table, which records the order they ran in.
"""

import hashlib
import json
import re
import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

from rlm_docs.corpus.store import fingerprint
from rlm_docs.errors import ConfigError

NOTE_CHARS = 2_000  # per note
NOTE_PAGES = 20  # pages per note
NOTES_PER_QUESTION = 50  # a question may not flood the memory
NOTES_SHOWN = 50  # per `notes()` call
_WORD = re.compile(r"\w+")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS replies (
    model TEXT NOT NULL, prompt_sha256 TEXT NOT NULL, reply TEXT NOT NULL,
    question_id TEXT, created REAL, PRIMARY KEY (model, prompt_sha256));
CREATE TABLE IF NOT EXISTS notes (
    id INTEGER PRIMARY KEY AUTOINCREMENT, text TEXT NOT NULL, pages TEXT NOT NULL,
    question_id TEXT, question TEXT, created REAL);
CREATE TABLE IF NOT EXISTS questions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, question_id TEXT, question TEXT, started REAL);
"""


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class Memory:
    """The memory of one corpus store under directory `root` (see module docstring)."""

    def __init__(self, root: str | Path, store: str | Path) -> None:
        self.root = Path(root)
        if self.root.exists() and not self.root.is_dir():
            raise ConfigError(f"memory {self.root}: not a directory")
        self.fingerprint = fingerprint(store)
        self.path = self.root / f"{self.fingerprint}.sqlite"
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            with self._db() as db:
                db.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(f"memory {self.root}: cannot open ({exc})") from None

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        """A connection for one operation, committed on success (one per call keeps threads
        apart; SQLite's lock, waited on up to a minute, keeps writers apart)."""
        with closing(sqlite3.connect(self.path, timeout=60)) as db, db:
            yield db

    def begin(self, question_id: str | None, question: str) -> int:
        """Number the question (1, 2, ... in the order questions start on this memory)."""
        with self._db() as db:
            cur = db.execute(
                "INSERT INTO questions (question_id, question, started) VALUES (?, ?, ?)",
                (question_id, question, time.time()),
            )
            return int(cur.lastrowid or 0)

    def reply(self, model: str, prompt: str) -> str | None:
        """The reply recorded for `model` and exactly `prompt`, or None."""
        with self._db() as db:
            row = db.execute(
                "SELECT reply FROM replies WHERE model = ? AND prompt_sha256 = ?",
                (model, _sha(prompt)),
            ).fetchone()
        return None if row is None else str(row[0])

    def keep(self, model: str, prompt: str, reply: str, question_id: str | None) -> None:
        """Record a model's reply to `prompt` (the first one recorded stays)."""
        with self._db() as db:
            db.execute(
                "INSERT OR IGNORE INTO replies VALUES (?, ?, ?, ?, ?)",
                (model, _sha(prompt), reply, question_id, time.time()),
            )

    def note_count(self) -> int:
        with self._db() as db:
            return int(db.execute("SELECT COUNT(*) FROM notes").fetchone()[0])

    def add_note(
        self, text: str, pages: list[dict[str, Any]], question_id: str | None, question: str
    ) -> int:
        """Keep a note; ValueError when the question has written NOTES_PER_QUESTION already."""
        with self._db() as db:
            written = db.execute(
                "SELECT COUNT(*) FROM notes WHERE question_id IS ? AND question = ?",
                (question_id, question),
            ).fetchone()[0]
            if written >= NOTES_PER_QUESTION:
                raise ValueError(f"note: at most {NOTES_PER_QUESTION} notes per question")
            cur = db.execute(
                "INSERT INTO notes (text, pages, question_id, question, created) "
                "VALUES (?, ?, ?, ?, ?)",
                (text, json.dumps(pages), question_id, question, time.time()),
            )
            return int(cur.lastrowid or 0)

    def notes(self, query: str | None = None) -> list[dict[str, Any]]:
        """Notes (oldest first, at most NOTES_SHOWN) whose text has every word of `query`."""
        words = [w.lower() for w in _WORD.findall(query or "")]
        with self._db() as db:
            rows = db.execute(
                "SELECT id, text, pages, question_id, question FROM notes ORDER BY id"
            ).fetchall()
        found = []
        for nid, text, pages, qid, question in rows:
            have = set(_WORD.findall(text.lower()))
            if all(w in have for w in words):
                found.append(
                    {
                        "id": nid,
                        "text": text,
                        "pages": json.loads(pages),
                        "question_id": qid,
                        "question": question,
                    }
                )
                if len(found) >= NOTES_SHOWN:
                    break
        return found
