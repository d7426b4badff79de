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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from rlm_docs.atomic import atomic_directory
from rlm_docs.corpus.document import Document
from rlm_docs.errors import CorpusError
from rlm_docs.tokens import count_tokens_batch

FORMAT = "rlm-docs-corpus"
VERSION = 1
MANIFEST = "manifest.json"
DOCUMENTS = "documents.parquet"
PAGES = "pages.parquet"
BM25_DIR = "bm25"
TOKEN_CHUNK = 2048  # pages per token-counting batch
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


def fill_tokens(docs: list[Document]) -> None:
    """Count tokens for every document that has no counts yet (in chunks so the encoder's
    token lists never pile up in memory)."""
    todo = [d for d in docs if d.tokens is None]
    texts = [p for d in todo for p in d.pages]
    counts: list[int] = []
    for i in range(0, len(texts), TOKEN_CHUNK):
        counts.extend(count_tokens_batch(texts[i : i + TOKEN_CHUNK]))
    i = 0
    for d in todo:
        d.tokens = counts[i : i + len(d.pages)]
        i += len(d.pages)


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


@contextmanager
def _alongside(fn: Callable[..., object], *args: object, fork: bool) -> Iterator[None]:
    """Run `fn(*args)` in a forked child while the block runs, else after it.

    Ingest has two CPU-bound halves, token counting (threads in tiktoken) and the BM25 index
    (Python); on 2 cores running them side by side cuts wall time. Forking shares the page
    texts copy-on-write, so nothing is pickled.
    """
    if not fork or "fork" not in mp.get_all_start_methods():
        yield
        fn(*args)
        return
    proc = mp.get_context("fork").Process(target=fn, args=args, daemon=True)
    proc.start()
    try:
        yield
    except BaseException:
        proc.terminate()
        proc.join()
        raise
    proc.join()
    if proc.exitcode != 0:
        raise CorpusError(f"building the BM25 index failed (exit code {proc.exitcode})")


def write_store(path: str | Path, docs: list[Document], manifest: dict | None = None) -> Path:
    """Write `docs` (tokens counted if missing) and a BM25 index as a store at `path`."""
    from rlm_docs.corpus.search import build_index

    check_documents(docs)
    texts = [p for d in docs for p in d.pages]
    big = sum(map(len, texts)) >= PARALLEL_MIN_CHARS
    target = Path(path)
    with atomic_directory(target) as tmp:
        with _alongside(build_index, texts, tmp / BM25_DIR, fork=big):
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


def check_expansion(file: Path) -> None:
    """CorpusError when `file`'s footer says its columns expand past `MAX_EXPANSION` times its
    size (and past `EXPANSION_FLOOR`): a decompression bomb, refused before reading it."""
    meta = pq.ParquetFile(file, memory_map=True).metadata
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
    (`check_expansion`); CorpusError naming the bad file."""
    out = []
    for name, schema in ((DOCUMENTS, DOCUMENTS_SCHEMA), (PAGES, PAGES_SCHEMA)):
        file = path / name
        try:
            check_expansion(file)
            table = pq.read_table(file, memory_map=True)
        except (OSError, pa.ArrowException) as exc:
            raise CorpusError(f"{file}: cannot read corpus table ({exc})") from None
        if name == DOCUMENTS and table.schema.equals(OLD_DOCUMENTS_SCHEMA, check_metadata=False):
            table = table.append_column("meta", pa.array(["{}"] * table.num_rows, pa.string()))
        if not table.schema.equals(schema, check_metadata=False):
            raise CorpusError(f"{file}: unexpected columns {table.schema.names}")
        out.append(table)
    return out[0], out[1]
