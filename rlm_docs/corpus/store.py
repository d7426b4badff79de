"""The on-disk corpus store: a directory written atomically and read memory-mapped.

Layout:
    manifest.json      format/version, per-source content hash, reader, documents, warnings
    documents.parquet  name, num_pages, chars, tokens, source, meta  (corpus order; meta is the
                       JSON metadata row given at ingest, "{}" when none; stores written
                       before it existed have no meta column and still load)
    pages.parquet      doc (index into documents), page (1-based), text, chars, tokens
    bm25/              the BM25 page index (`rlm_docs.corpus.search`)

Everything is written into `rlm_docs.atomic.atomic_directory`, so a failed write leaves the
previous store untouched and readers never see a mix of old and new files.

A store is read from its Parquet footer first: a crafted 32 KB `pages.parquet` can hold one
1,000,000,000-character page (compression squeezes repetition to almost nothing), so a table
whose columns would expand past `MAX_EXPANSION` times the file's size (and past
`EXPANSION_FLOOR` bytes) is refused before anything is decompressed. Stores written here use
snappy, which never shrinks data by more than about 22x.
"""

import hashlib
import json
import multiprocessing as mp
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from rlm_docs.atomic import atomic_directory
from rlm_docs.corpus.document import Document
from rlm_docs.errors import CorpusError
from rlm_docs.tokens import count_tokens_batch, encoding

FORMAT = "rlm-docs-corpus"
VERSION = 1
MANIFEST = "manifest.json"
DOCUMENTS = "documents.parquet"
PAGES = "pages.parquet"
BM25_DIR = "bm25"
TOKEN_CHUNK = 2048  # pages per token-counting batch
SHARED_CHUNK = 256  # pages per chunk when two processes count tokens
PARALLEL_MIN_CHARS = 2_000_000  # smaller corpora index in-process (a fork costs more)
MAX_EXPANSION = 100  # uncompressed bytes per byte of a table file, at most
EXPANSION_FLOOR = 16 * 1024 * 1024  # tables expanding to less are read whatever their ratio

DOCUMENTS_SCHEMA = pa.schema(
    [
        ("name", pa.string()),
        ("num_pages", pa.int32()),
        ("chars", pa.int64()),
        ("tokens", pa.int64()),
        ("source", pa.string()),
        ("meta", pa.string()),
    ]
)
OLD_DOCUMENTS_SCHEMA = pa.schema(list(DOCUMENTS_SCHEMA)[:-1])  # before `meta`
# How pages.parquet is written, for a fast load (every fork server and `Corpus.load` reads it
# whole): LZ4 decompresses at about twice snappy's speed at the same size, and page texts are
# nearly all distinct, so a dictionary for them (tried, then abandoned page by page) and min/max
# statistics (two whole pages per row group in the footer) only cost time.
_NUMBERS = ["doc", "page", "chars", "tokens"]
PAGES_WRITE = {"compression": "lz4", "use_dictionary": _NUMBERS, "write_statistics": _NUMBERS}
PAGES_SCHEMA = pa.schema(
    [
        ("doc", pa.int32()),
        ("page", pa.int32()),
        ("text", pa.large_string()),
        ("chars", pa.int32()),
        ("tokens", pa.int32()),
    ]
)


def fill_tokens(docs: list[Document], counts: Sequence[int] | None = None) -> None:
    """Count tokens for every document that has no counts yet (in chunks so the encoder's
    token lists never pile up in memory), or take them from `counts` (one per page of those
    documents, in order: what `_SharedCounts` counted)."""
    todo = [d for d in docs if d.tokens is None]
    if counts is None:
        texts = [p for d in todo for p in d.pages]
        counts = []
        for i in range(0, len(texts), TOKEN_CHUNK):
            counts.extend(count_tokens_batch(texts[i : i + TOKEN_CHUNK]))
    i = 0
    for d in todo:
        d.tokens = list(counts[i : i + len(d.pages)])
        i += len(d.pages)


class _SharedCounts:
    """Token counts of `texts`, counted by two processes at once: the parent takes chunks of
    SHARED_CHUNK pages from the front, a forked child (once its own job is done) from the
    back, until they meet. Ingest's two halves differ in cost from corpus to corpus (token
    counting took 23 CPU seconds and the BM25 indexes 16 on FinanceBench), so whichever
    finishes first helps with the rest instead of leaving a core idle. The counts live in
    shared memory made before the fork; the child's are read after it has exited cleanly."""

    def __init__(self, texts: list[str]) -> None:
        ctx = mp.get_context("fork")
        self.texts = texts
        self.counts = ctx.RawArray("q", len(texts))
        self.bounds = ctx.RawArray("q", [0, -(-len(texts) // SHARED_CHUNK)])  # chunks left
        self.lock = ctx.Lock()

    def _take(self, front: bool, peer_alive: Callable[[], bool]) -> int | None:
        """The next chunk from the front or the back, None when none is left. A peer killed
        while holding the lock would leave it held: once the peer is gone, go on without it."""
        locked = False
        while not locked and peer_alive():
            locked = self.lock.acquire(timeout=0.5)
        try:
            lo, hi = self.bounds[0], self.bounds[1]
            if lo >= hi:
                return None
            self.bounds[0 if front else 1] = lo + 1 if front else hi - 1
            return lo if front else hi - 1
        finally:
            if locked:
                self.lock.release()

    def count(self, front: bool, peer_alive: Callable[[], bool]) -> None:
        while (chunk := self._take(front, peer_alive)) is not None:
            a = chunk * SHARED_CHUNK
            b = min(a + SHARED_CHUNK, len(self.texts))
            self.counts[a:b] = count_tokens_batch(self.texts[a:b])


def check_documents(docs: list[Document]) -> None:
    """Reject what a store cannot hold: duplicate names, documents without pages."""
    seen: dict[str, str] = {}
    for d in docs:
        if not d.name:
            raise CorpusError(f"a document from {d.source or '<memory>'} has an empty name")
        if not d.pages:
            raise CorpusError(f"document {d.name!r} ({d.source or '<memory>'}) has no pages")
        if d.name in seen:
            raise CorpusError(
                f"duplicate document name {d.name!r}: from {seen[d.name] or '<memory>'} "
                f"and {d.source or '<memory>'}; rename one of the files"
            )
        seen[d.name] = d.source


def build_tables(docs: list[Document]) -> tuple[pa.Table, pa.Table]:
    """Arrow tables of a document list (token counts must be filled)."""
    check_documents(docs)
    texts = [p for d in docs for p in d.pages]
    chars = [len(p) for p in texts]
    tokens = [t for d in docs for t in (d.tokens or [0] * len(d.pages))]
    doc_idx = [i for i, d in enumerate(docs) for _ in d.pages]
    page_no = [p for d in docs for p in range(1, len(d.pages) + 1)]
    pages = pa.table(
        [
            pa.array(doc_idx, pa.int32()),
            pa.array(page_no, pa.int32()),
            pa.array(texts, pa.large_string()),
            pa.array(chars, pa.int32()),
            pa.array(tokens, pa.int32()),
        ],
        schema=PAGES_SCHEMA,
    )
    o = 0
    doc_chars, doc_tokens = [], []
    for d in docs:
        n = len(d.pages)
        doc_chars.append(sum(chars[o : o + n]))
        doc_tokens.append(sum(tokens[o : o + n]))
        o += n
    documents = pa.table(
        [
            pa.array([d.name for d in docs], pa.string()),
            pa.array([len(d.pages) for d in docs], pa.int32()),
            pa.array(doc_chars, pa.int64()),
            pa.array(doc_tokens, pa.int64()),
            pa.array([d.source for d in docs], pa.string()),
            pa.array([json.dumps(d.meta, ensure_ascii=False) for d in docs], pa.string()),
        ],
        schema=DOCUMENTS_SCHEMA,
    )
    return documents, pages


def _index_then_count(out: Path, texts: list[str], shared: _SharedCounts) -> None:
    """The forked child's work: the BM25 index of `texts`, then token counts from the back."""
    from rlm_docs.corpus.search import build_index

    parent = os.getppid()
    build_index(texts, out)
    shared.count(front=False, peer_alive=lambda: os.getppid() == parent)


def write_store(path: str | Path, docs: list[Document], manifest: dict | None = None) -> Path:
    """Write `docs` (tokens counted if missing) and a BM25 index as a store at `path`.

    Ingest has two CPU-bound halves, token counting and the BM25 index; on 2 cores a big
    corpus runs them side by side: the index in a forked child (sharing the page texts
    copy-on-write, so nothing is pickled) that then helps count tokens (`_SharedCounts`)."""
    from rlm_docs.corpus.search import build_index

    check_documents(docs)
    texts = [p for d in docs for p in d.pages]
    fork = sum(map(len, texts)) >= PARALLEL_MIN_CHARS and "fork" in mp.get_all_start_methods()
    target = Path(path)
    with atomic_directory(target) as tmp:
        if fork:
            todo = [p for d in docs if d.tokens is None for p in d.pages]
            shared = _SharedCounts(todo)
            encoding()  # loaded once, before the fork, for both processes
            child = mp.get_context("fork").Process(
                target=_index_then_count, args=(tmp / BM25_DIR, texts, shared), daemon=True
            )
            child.start()
            try:
                shared.count(front=True, peer_alive=child.is_alive)
            except BaseException:
                child.terminate()
                child.join()
                raise
            child.join()
            if child.exitcode != 0:
                raise CorpusError(f"building the BM25 index failed (exit code {child.exitcode})")
            fill_tokens(docs, shared.counts)
        else:
            build_index(texts, tmp / BM25_DIR)
            fill_tokens(docs)
        documents, pages = build_tables(docs)
        pq.write_table(documents, tmp / DOCUMENTS)
        pq.write_table(pages, tmp / PAGES, row_group_size=8192, **PAGES_WRITE)
        meta = {"format": FORMAT, "version": VERSION, **(manifest or {})}
        (tmp / MANIFEST).write_text(json.dumps(meta, indent=1, ensure_ascii=False) + "\n")
    return target


def fingerprint(path: str | Path) -> str:
    """SHA-256 over the store's manifest and tables (the BM25 index derives from them): what a
    run records of its corpus, so a reader can tell the store now at that path is the same one.
    CorpusError when `path` is not a readable store."""
    root = Path(path)
    read_manifest(root)
    digest = hashlib.sha256()
    for name in (MANIFEST, DOCUMENTS, PAGES):
        digest.update(name.encode() + b"\0")
        try:
            with open(root / name, "rb") as fh:
                while chunk := fh.read(1 << 20):
                    digest.update(chunk)
        except OSError as exc:
            raise CorpusError(f"{root / name}: cannot read ({exc})") from None
    return digest.hexdigest()


def read_manifest(path: Path) -> dict:
    """The manifest of the store at `path`; CorpusError if `path` is not a store."""
    file = path / MANIFEST
    if not path.is_dir():
        raise CorpusError(f"{path}: no corpus store here (run `rlm-docs ingest SRC --out {path}`)")
    try:
        meta = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CorpusError(f"{path}: not a corpus store ({MANIFEST} is missing)") from None
    except (OSError, ValueError) as exc:
        raise CorpusError(f"{file}: unreadable manifest ({exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CorpusError(f"{file}: not an rlm-docs corpus manifest")
    if meta.get("version") != VERSION:
        raise CorpusError(
            f"{file}: store format version {meta.get('version')} is not supported "
            f"(expected {VERSION}); re-run `rlm-docs ingest`"
        )
    return meta


def check_expansion(file: Path, parquet: pq.ParquetFile | None = None) -> None:
    """CorpusError when `file`'s footer says its columns expand past `MAX_EXPANSION` times its
    size (and past `EXPANSION_FLOOR`): a decompression bomb, refused before reading it.
    `parquet`: the file already opened."""
    meta = (parquet or pq.ParquetFile(file, memory_map=True)).metadata
    sizes: dict[str, int] = {}
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        for c in range(group.num_columns):
            column = group.column(c)
            sizes[column.path_in_schema] = (
                sizes.get(column.path_in_schema, 0) + column.total_uncompressed_size
            )
    total, size = sum(sizes.values()), file.stat().st_size
    if total > max(EXPANSION_FLOOR, MAX_EXPANSION * size):
        column = max(sizes, key=lambda k: sizes[k])
        raise CorpusError(
            f"{file}: its columns expand to {total:,} bytes ({column}: {sizes[column]:,}) from "
            f"a {size:,}-byte file, over {MAX_EXPANSION}x; refused unread (not a store rlm-docs "
            "wrote)"
        )


def read_tables(path: Path) -> tuple[pa.Table, pa.Table]:
    """The documents and pages tables, memory-mapped, each checked for its expansion first
    (`check_expansion`); CorpusError naming the bad file. Read through `ParquetFile`, whose
    footer the check has parsed: `pq.read_table` goes through the dataset API, whose import
    pulls in pandas (about 0.4 s of every fork server's start on an idle machine)."""
    out = []
    for name, schema in ((DOCUMENTS, DOCUMENTS_SCHEMA), (PAGES, PAGES_SCHEMA)):
        file = path / name
        try:
            parquet = pq.ParquetFile(file, memory_map=True)
            check_expansion(file, parquet)
            table = parquet.read()
        except (OSError, pa.ArrowException) as exc:
            raise CorpusError(f"{file}: cannot read corpus table ({exc})") from None
        if name == DOCUMENTS and table.schema.equals(OLD_DOCUMENTS_SCHEMA, check_metadata=False):
            table = table.append_column("meta", pa.array(["{}"] * table.num_rows, pa.string()))
        if not table.schema.equals(schema, check_metadata=False):
            raise CorpusError(f"{file}: unexpected columns {table.schema.names}")
        out.append(table)
    return out[0], out[1]
