"""`ingest`: source files → a corpus store, re-reading only what changed.

Each source file is identified by its file name, the sha256 of its bytes and the reader
options (the name matters: it is the document name). When the
output store already holds a source with the same identity (recorded in its manifest), that
source's documents and token counts are copied from the old store instead of being read and
tokenized again ("skipped N unchanged"); when every source is unchanged the store is left as is.
All reading happens before anything is written, and the store is replaced atomically, so bad
input never leaves a half-written or damaged store behind.

`metadata=FILE` (JSONL, see `rlm_docs.corpus.metadata`) attaches a row to every document it
names; the file's hash is recorded in the manifest, so a changed file rewrites the store.
Without it, documents copied from the old store keep the metadata they had. `ranker=NAME`
records the page-search ranker the store is searched with (`rlm_docs.corpus.rankers`) in the
manifest, for collections the automatic choice gets wrong; without it the old store's choice
is kept.
"""

import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rlm_docs.corpus import Corpus, store
from rlm_docs.corpus.document import Document
from rlm_docs.corpus.metadata import match_rows, read_metadata
from rlm_docs.corpus.rankers import RANKER_NAMES
from rlm_docs.errors import CorpusError, IngestError
from rlm_docs.ingest.detect import read_source, supported
from rlm_docs.ingest.duplicates import duplicate_warnings
from rlm_docs.ingest.encoding import checked
from rlm_docs.ingest.formats import FORMATS, OCR_MODES
from rlm_docs.ingest.source import Options


@dataclass(slots=True)
class IngestReport:
    """What an ingest did. `ignored`: files found in the source directories but not read
    (unsupported type, hidden). `removed`: documents the old store at `out` held that the new
    one does not (an ingest without `append` replaces the store)."""

    path: Path
    documents: int
    pages: int
    tokens: int
    read: int
    skipped: int
    written: bool
    warnings: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {**asdict(self), "path": str(self.path)}


def _check_link(path: Path, root: Path) -> None:
    """Refuse `path` when it resolves (through symlinks) outside `root`: a document that links
    to a host file would become corpus text, sent to model providers and shown in viewers."""
    target = path.resolve()
    if not target.is_relative_to(root.resolve()):
        raise IngestError(
            f"{path}: a symlink to {target}, outside {root}; not read "
            "(pass --follow-symlinks to read it)"
        )


def _stores_under(path: Path) -> set[Path]:
    """Corpus stores inside a source directory (a store written beside its sources): their
    manifest and BM25 files are JSON, but not documents."""
    return {m.parent for m in path.rglob(store.MANIFEST) if (m.parent / store.PAGES).is_file()}


def discover(
    sources: list[str | Path], exclude: Path | None = None, follow_symlinks: bool = False
) -> tuple[list[Path], list[Path]]:
    """(files to read, files ignored): files named by `sources`, and directories searched
    recursively for supported files in sorted order; unsupported and hidden files are
    ignored (and reported), and so are corpus stores found there (reported as the store's
    directory); anything under `exclude` (the output store) is skipped silently. Duplicates
    are dropped. Unless `follow_symlinks`, a file that resolves outside its source root (the
    directory given, or the directory of a file given) is refused with IngestError."""
    skip = exclude.resolve() if exclude is not None else None
    files: list[Path] = []
    ignored: list[Path] = []
    for src in sources:
        path = Path(src)
        if path.is_dir():
            found: list[Path] = []
            stores = _stores_under(path)
            ignored.extend(sorted(s for s in stores if skip is None or s.resolve() != skip))
            in_out = 0
            for p in sorted(path.rglob("*")):
                if not p.is_file() or any(p.is_relative_to(s) for s in stores):
                    continue
                if skip is not None and p.resolve().is_relative_to(skip):
                    in_out += 1
                    continue
                hidden = any(part.startswith(".") for part in p.relative_to(path).parts)
                if supported(p) and not hidden and not follow_symlinks:
                    _check_link(p, path)
                (found if supported(p) and not hidden else ignored).append(p)
            if not found and in_out:
                raise IngestError(
                    f"{path}: every file in it is inside the output directory {exclude}; "
                    "choose an --out outside the sources"
                )
            if not found:
                raise IngestError(f"{path}: no .pdf/.json/.md/.txt files in this directory")
            files.extend(found)
        elif path.is_file():
            if not follow_symlinks:
                _check_link(path, path.parent)
            files.append(path)
        else:
            raise IngestError(f"{path}: no such file or directory")
    unique: dict[Path, Path] = {}
    for f in files:
        unique.setdefault(f.resolve(), f)
    return list(unique.values()), ignored


def _previous(out: Path) -> tuple[Corpus | None, dict[tuple[str, str, str], dict]]:
    """The existing store at `out` and its sources by identity. Refuses to replace anything
    that is not a corpus store."""
    if not out.exists():
        return None, {}
    if not out.is_dir():
        raise IngestError(f"{out}: exists and is not a corpus store directory")
    if not (out / store.MANIFEST).exists():
        if any(out.iterdir()):
            raise IngestError(
                f"{out}: directory is not empty and not a corpus store; not replacing it"
            )
        return None, {}
    try:
        old = Corpus.load(out)
    except CorpusError:
        return None, {}
    entries = {
        (Path(e.get("path", "")).name, e["sha256"], json.dumps(e.get("options"), sort_keys=True)): e
        for e in old.manifest.get("sources", [])
        if isinstance(e, dict) and "sha256" in e
    }
    return old, entries


def ingest(
    sources: list[str | Path],
    out: str | Path,
    *,
    format: str | None = None,
    separator: str | None = None,
    ocr: str = "auto",
    metadata: str | Path | None = None,
    append: bool = False,
    on_progress: Callable[[int, int, int], None] | None = None,
    follow_symlinks: bool = False,
    encoding: str | None = None,
    ranker: str | None = None,
) -> IngestReport:
    """Read `sources` (files or directories) and write the corpus store `out`, attaching the
    rows of the JSONL file `metadata` to the documents they name.

    `append=True` keeps the documents of the existing store at `out` and adds the new ones
    (a document with the same name is replaced). `on_progress(files_done, files_total,
    pages_read)` is called after each source file. Symlinks that leave the source roots are
    refused unless `follow_symlinks` (see `discover`). Text sources are read in `encoding`
    when given, else as UTF-8 or the encoding detected (recorded per source in the manifest).
    `ranker` names the page-search ranker recorded in the manifest (see the module docstring)."""
    if format is not None and format not in FORMATS:
        raise IngestError(f"unknown --format {format!r} (choose from {', '.join(FORMATS)})")
    if ocr not in OCR_MODES:
        raise IngestError(f"unknown --ocr {ocr!r} (choose from {', '.join(OCR_MODES)})")
    if ranker is not None and ranker not in RANKER_NAMES:
        raise IngestError(f"unknown --ranker {ranker!r} (choose from {', '.join(RANKER_NAMES)})")
    options = Options(format, separator, ocr, checked(encoding) if encoding else None)
    option_key = json.dumps(options.key(), sort_keys=True)
    out = Path(out)
    rows = read_metadata(metadata) if metadata is not None else None
    old, previous = _previous(out)  # first: a wrong --out is named as such
    files, ignored = discover(list(sources), exclude=out, follow_symlinks=follow_symlinks)
    docs: list[Document] = []
    entries: list[dict] = []
    warnings: list[str] = []
    skipped = 0
    for path in files:
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise IngestError(f"{path}: cannot read ({exc.strerror})") from None
        digest = hashlib.sha256(data).hexdigest()
        prev = previous.get((path.name, digest, option_key))
        if old is not None and prev is not None and all(n in old for n in prev["documents"]):
            found = [old.document(n) for n in prev["documents"]]
            for d in found:
                d.source = str(path)
            reader, notes = prev.get("reader", "?"), list(prev.get("warnings", []))
            text_encoding = prev.get("encoding")
            skipped += 1
        else:
            result = read_source(path, data, digest, options)
            found, reader, notes = result.documents, result.reader, result.warnings
            text_encoding = result.encoding
        docs.extend(found)
        warnings.extend(notes)
        entries.append(
            {
                "path": str(path),
                "sha256": digest,
                "options": options.key(),
                "reader": reader,
                **({"encoding": text_encoding} if text_encoding else {}),
                "documents": [d.name for d in found],
                "warnings": notes,
            }
        )
        if on_progress is not None:
            on_progress(len(entries), len(files), sum(len(d.pages) for d in docs))
    store.check_documents(docs)  # the new documents alone: a clash among them is an error
    if append and old is not None:
        docs, entries = _appended(old, docs, entries)
    warnings.extend(duplicate_warnings(docs))
    meta_entry = old.manifest.get("metadata") if old is not None else None
    if metadata is not None and rows is not None:
        meta_entry = {"path": str(metadata), "sha256": _sha256(Path(metadata))}
        warnings.extend(_attach(docs, rows, Path(metadata)))
    old_ranker = old.manifest.get("ranker") if old is not None else None
    ranker = ranker or old_ranker
    unchanged = (
        old is not None
        and skipped == len(files)
        and _same_sources(old, entries)
        and meta_entry == old.manifest.get("metadata")
        and ranker == old_ranker
    )
    if not unchanged:
        manifest = {"sources": entries, "warnings": warnings}
        if meta_entry is not None:
            manifest["metadata"] = meta_entry
        if ranker is not None:
            manifest["ranker"] = ranker
        store.write_store(out, docs, manifest)
    names = {d.name for d in docs}
    return IngestReport(
        out,
        len(docs),
        sum(len(d.pages) for d in docs),
        sum(sum(d.tokens or []) for d in docs),
        len(files) - skipped,
        skipped,
        not unchanged,
        warnings,
        ignored=[str(p) for p in ignored],
        removed=[n for n in old.names if n not in names] if old is not None else [],
    )


def _appended(
    old: Corpus, docs: list[Document], entries: list[dict]
) -> tuple[list[Document], list[dict]]:
    """The old store's documents with `docs` added, a new document replacing an old one of the
    same name in place; an old manifest entry keeps the documents still its own, and a new
    entry for the very same source takes the old one's place (so appending what is already
    there leaves the store as it was)."""
    new = {d.name: d for d in docs}
    merged = [new.pop(n) if n in new else old.document(n) for n in old.names]
    merged.extend(new.values())
    replaced = {d.name for d in docs}
    fresh = {_ident(e): e for e in entries}
    kept = []
    for e in old.manifest.get("sources", []):
        same = fresh.get(_ident(e))
        if same is not None and same["documents"] == e.get("documents"):
            kept.append(fresh.pop(_ident(e)))
            continue
        names = [n for n in e.get("documents", []) if n not in replaced]
        if names:
            kept.append({**e, "documents": names})
    return merged, kept + list(fresh.values())


def _ident(entry: dict) -> tuple:
    """A manifest source entry's identity: its path, content hash and reader options."""
    return entry.get("path"), entry.get("sha256"), json.dumps(entry.get("options"), sort_keys=True)


def _same_sources(old: Corpus, entries: list[dict]) -> bool:
    return [_ident(e) for e in old.manifest.get("sources", [])] == [_ident(e) for e in entries]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _attach(docs: list[Document], rows: dict[str, dict], file: Path) -> list[str]:
    """Set each document's metadata from `rows`; warnings for rows naming no document and for
    documents without a row."""
    found, unused = match_rows([d.name for d in docs], rows)
    for d in docs:
        d.meta = dict(found[d.name])
    notes = []
    if unused:
        notes.append(
            f"{file}: {len(unused)} metadata row(s) name no ingested document (e.g. {unused[0]!r})"
        )
    missing = [d.name for d in docs if not d.meta]
    if missing:
        notes.append(
            f"{file}: no metadata row for {len(missing)} document(s) (e.g. {missing[0]!r})"
        )
    return notes
