"""Assemble the single-file viewer: template + inline CSS/JS + the data as embedded JSON.

The data goes in a `<script type="application/json">` element. Every `<` in the JSON is written
as `\\u003c`, so no document text (`</script>`, `<!--`) can end the element early or inject
markup; the browser's JSON.parse restores the characters exactly.
"""

import html
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

from rlm_docs.atomic import atomic_write_text
from rlm_docs.corpus.store import fingerprint
from rlm_docs.errors import ConfigError, CorpusError
from rlm_docs.eval.rundir import FINGERPRINT
from rlm_docs.viewer.load import load_source
from rlm_docs.viewer.snippets import attach_snippets

_SLOT = re.compile(r"\{\{(TITLE|CSS|JS|DATA)\}\}")


def _asset(name: str) -> str:
    return resources.files("rlm_docs.viewer").joinpath(name).read_text(encoding="utf-8")


def embed_json(data: Any) -> str:
    """JSON safe to place inside a `<script>` element."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False, default=str)
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def build_html(data: dict[str, Any], title: str | None = None) -> str:
    """The complete HTML page for viewer `data` (see `rlm_docs.viewer.load`)."""
    slots = {
        "TITLE": html.escape(title or f"rlm-docs · {data.get('title', 'run')}"),
        "CSS": _asset("viewer.css"),
        "JS": _asset("viewer.js"),
        "DATA": embed_json(data),
    }
    return _SLOT.sub(lambda m: slots[m.group(1)], _asset("template.html"))


def _recorded_corpus(run: dict[str, Any]) -> str | None:
    """The run's corpus path when the store there has the run's recorded fingerprint."""
    recorded, expected = run.get("corpus"), run.get(FINGERPRINT)
    if not isinstance(recorded, str) or not isinstance(expected, str):
        return None
    try:
        return recorded if fingerprint(recorded) == expected else None
    except CorpusError:  # moved or deleted since the run
        return None


def write_viewer(
    source: str | Path,
    out: str | Path,
    corpus: Any = None,
    title: str | None = None,
) -> Path:
    """Write the viewer of `source` (run directory or trajectory JSONL) to `out`, atomically.

    `corpus` (a `Corpus` or a store path) adds the text around each cited page's answer.
    By default the run's own corpus is used, but only when the store now at the path its
    run.json names has the content hash the run recorded (`corpus_sha256`): a run directory
    may come from someone else, and its run.json could name any store on this machine, whose
    pages would then be copied into an HTML file that might be sent back.
    """
    target = Path(out)
    if target.is_dir():
        raise ConfigError(f"--out {target}: is a directory; give an .html file name")
    data = load_source(source)
    if corpus is None:
        corpus = _recorded_corpus(data["run"])
    if corpus is not None:
        attach_snippets(data, corpus)
    atomic_write_text(target, build_html(data, title))
    return target
