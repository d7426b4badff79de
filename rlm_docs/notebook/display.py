"""Rich notebook display of corpora, search hits, predictions, ledgers and cell results.

Each `*_html` function returns an HTML fragment that needs no JavaScript (long parts fold into
`<details>`), so it renders the same in Jupyter, VS Code and static notebook viewers; each
`*_text` function is the plain-text fallback. `register()` makes IPython show corpora, hits,
predictions, ledgers and cell results through these views; the classes themselves carry no
presentation code (imports run one way: core types never import the notebook). `show(obj)` picks
the right view for anything rlm-docs returns.
"""

from collections.abc import Callable, Iterable, Sequence
from html import escape
from typing import Any

from rlm_docs.governor import axes
from rlm_docs.viewer.snippets import page_snippet

FOLD_ROWS = 15
STYLE = (
    "<style>.rlm-docs table{border-collapse:collapse;font-size:12px;margin:4px 0}"
    ".rlm-docs td,.rlm-docs th{border:1px solid #d9dee7;padding:2px 8px;text-align:left;"
    "vertical-align:top}.rlm-docs th{background:#f3f4f7}.rlm-docs td.n{text-align:right}"
    ".rlm-docs pre{background:#f3f4f7;padding:6px 8px;white-space:pre-wrap;margin:4px 0;"
    "max-height:420px;overflow:auto}.rlm-docs pre.code{background:#0f1720;color:#e6edf3}"
    ".rlm-docs .err{color:#b3261e}.rlm-docs .muted{color:#667085}"
    ".rlm-docs .cite{border-left:3px solid #1a56db;padding:2px 8px;margin:3px 0}</style>"
)


class Rich:
    """An HTML view with a plain-text fallback, as IPython's display protocol wants."""

    def __init__(self, html: str, text: str) -> None:
        self.html = html
        self.text = text

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return self.text


def wrap(inner: str) -> str:
    """A fragment in the shared style scope."""
    return f'{STYLE}<div class="rlm-docs">{inner}</div>'


def num(value: Any) -> str:
    """Thousands-separated integers, 6-decimal dollars stay as given."""
    if isinstance(value, bool) or value is None:
        return escape(str(value))
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.6g}"
    return escape(str(value))


def usd(value: float | None) -> str:
    return "–" if value is None else f"${value:.6f}"


def table(header: Sequence[str], rows: Sequence[Sequence[Any]], numeric: set[int]) -> str:
    """An HTML table; rows past FOLD_ROWS fold into a `<details>`."""

    def tr(row: Sequence[Any]) -> str:
        cells = (
            f'<td class="n">{num(v)}</td>' if i in numeric else f"<td>{escape(str(v))}</td>"
            for i, v in enumerate(row)
        )
        return "<tr>" + "".join(cells) + "</tr>"

    head = "<tr>" + "".join(f"<th>{escape(h)}</th>" for h in header) + "</tr>"
    shown = "".join(tr(r) for r in rows[:FOLD_ROWS])
    html = f"<table>{head}{shown}</table>"
    if len(rows) > FOLD_ROWS:
        rest = "".join(tr(r) for r in rows[FOLD_ROWS:])
        html += (
            f"<details><summary>{len(rows) - FOLD_ROWS:,} more rows</summary>"
            f"<table>{head}{rest}</table></details>"
        )
    return html


def block(label: str, text: str, css: str = "", fold_over: int = 1500) -> str:
    """A `<pre>` block, folded behind its label when long."""
    if not text:
        return ""
    pre = f'<pre class="{css}">{escape(text)}</pre>'
    if len(text) > fold_over:
        return f"<details><summary>{escape(label)} ({len(text):,} chars)</summary>{pre}</details>"
    return f"<div><b>{escape(label)}</b>{pre}</div>"


# -- corpus and hits ---------------------------------------------------------------------


def corpus_text(corpus: Any) -> str:
    where = f" at {corpus.path}" if corpus.path else " (in memory)"
    return (
        f"Corpus{where}: {len(corpus):,} documents, {corpus.total_pages:,} pages, "
        f"{corpus.total_tokens:,} tokens, {corpus.total_chars:,} chars"
    )


def corpus_html(corpus: Any) -> str:
    rows = [(d.name, d.num_pages, d.tokens, d.chars, d.source) for d in corpus.documents]
    docs = table(("document", "pages", "tokens", "chars", "source"), rows, {1, 2, 3})
    return wrap(f"<b>{escape(corpus_text(corpus))}</b>{docs}")


def hit_text(hit: Any) -> str:
    """One line: document, page, score and the start of the snippet."""
    return f"{hit.document} p.{hit.page} ({hit.score:.2f}): {' '.join(hit.snippet.split())[:100]}"


def hits_text(hits: Sequence[Any]) -> str:
    lines = [f"{len(hits)} hit(s)"]
    lines += [f"{i}. {hit_text(h)}" for i, h in enumerate(hits, 1)]
    return "\n".join(lines)


def cell_text(result: Any) -> str:
    """What the cell printed, its error, and a restart notice: what a terminal would show."""
    parts = [result.stdout or "", result.error or ""]
    if result.restarted:
        parts.append("[the sandbox worker was restarted: variables are gone]")
    return (
        "\n".join(p.rstrip("\n") for p in parts if p) or f"(no output, {result.duration_s:.3f} s)"
    )


def hits_html(hits: Sequence[Any]) -> str:
    rows = [
        (i, h.document, h.page, round(h.score, 3), " ".join(h.snippet.split()))
        for i, h in enumerate(hits, 1)
    ]
    return wrap(table(("#", "document", "page", "score", "snippet"), rows, {0, 2, 3}))


def hit_html(hit: Any) -> str:
    return hits_html([hit])


# -- predictions ---------------------------------------------------------------------------


def effort_html(pred: Any) -> str:
    """A prediction's effort table: every recorded axis of `governor.axes`, then how the run
    stopped."""
    recorded = [a for a in axes.axes() if a.recorded]
    values = pred.effort()
    row = [usd(values[a.name]) if a.unit == "usd" else values[a.name] for a in recorded]
    return table(
        [*(a.noun for a in recorded), "stop reason"],
        [[*row, pred.stop_reason]],
        {i for i, a in enumerate(recorded) if a.unit != "usd"},
    )


def effort_text(pred: Any) -> str:
    """The effort line of a prediction (`3 root steps, 2 sub-calls, ..., stop=final`)."""
    values = pred.effort()
    shown = [a.brief(values[a.name]) for a in axes.axes() if a.recorded]
    return ", ".join([*shown, f"stop={pred.stop_reason}"])


def prediction_text(pred: Any, corpus: Any = None) -> str:
    cites = ", ".join(f"{c['file']} p.{c['page']}" for c in pred.citations) or "none"
    lines = [
        f"Q: {pred.question}",
        f"A: {' | '.join(pred.answer) or '(no answer)'}",
        *([f"Explanation: {pred.explanation}"] if pred.explanation else []),
        *([f"Caveat: {pred.caveat}"] if pred.caveat else []),
        f"Citations: {cites}",
        f"Effort: {effort_text(pred)}",
    ]
    if pred.error:
        lines.append(f"Error: {pred.error}")
    if corpus is not None:
        lines += [f"  [{c['file']} p.{c['page']}] {s}" for c, s in cited_snippets(pred, corpus)]
    return "\n".join(lines)


def cited_snippets(pred: Any, corpus: Any) -> list[tuple[dict, str]]:
    """(citation, text around the answer on that page) for citations the corpus has."""
    from rlm_docs.errors import CorpusError

    out = []
    for c in pred.citations:
        try:
            out.append((c, page_snippet(corpus.page(c["file"], int(c["page"])), pred.answer)))
        except (CorpusError, KeyError, TypeError, ValueError):
            continue
    return out


def prediction_html(pred: Any, corpus: Any = None) -> str:
    answer = "".join(f"<li><b>{escape(a)}</b></li>" for a in pred.answer) or (
        '<li class="muted">(no answer)</li>'
    )
    snippets = dict.fromkeys(range(len(pred.citations)), "")
    if corpus is not None:
        found = {(c["file"], c["page"]): s for c, s in cited_snippets(pred, corpus)}
        for i, c in enumerate(pred.citations):
            snippets[i] = found.get((c["file"], c["page"]), "")
    cites = (
        "".join(
            f'<div class="cite"><code>{escape(str(c["file"]))} · page {escape(str(c["page"]))}'
            f"</code>{f'<div>{escape(snippets[i])}</div>' if snippets[i] else ''}</div>"
            for i, c in enumerate(pred.citations)
        )
        or '<div class="muted">no citations</div>'
    )
    effort = effort_html(pred)
    notes = "".join(
        f"<div><b>{label}:</b> {escape(text)}</div>"
        for label, text in (("Explanation", pred.explanation), ("Caveat", pred.caveat))
        if text
    )
    error = f'<div class="err">error: {escape(pred.error)}</div>' if pred.error else ""
    log = (
        f'<div class="muted">trajectory: {escape(pred.trajectory)}</div>' if pred.trajectory else ""
    )
    return wrap(
        f"<div><b>Q:</b> {escape(pred.question)}</div><ul>{answer}</ul>{notes}"
        f"<div><b>Citations</b></div>{cites}<div><b>Effort</b></div>{effort}{error}{log}"
    )


# -- ledger and cells -----------------------------------------------------------------------

LEDGER_COLUMNS = (
    "question_id",
    "depth",
    "role",
    "model",
    "input_tokens",
    "output_tokens",
    "cached_tokens",
    "cost_usd",
    "latency_s",
    "cached",
    "error",
)


def ledger_text(ledger: Any) -> str:
    t = ledger.totals()
    return (
        f"Ledger: {t['calls']} calls, {t['input_tokens']:,} in / {t['output_tokens']:,} out "
        f"tokens, {usd(t['cost_usd'])}, {t['errors']} errors, {t['cache_hits']} cache hits"
    )


def ledger_html(ledger: Any) -> str:
    rows = [[getattr(e, c) for c in LEDGER_COLUMNS] for e in ledger.entries]
    grid = table(LEDGER_COLUMNS, rows, {1, 4, 5, 6, 7, 8})
    return wrap(f"<b>{escape(ledger_text(ledger))}</b>{grid}")


def cell_html(result: Any) -> str:
    """A sandbox `CellOutcome`: what it printed, its error, whether the worker restarted."""
    parts = [block("output", result.stdout or "", fold_over=20_000)]
    if result.error:
        parts.append(f'<pre class="err">{escape(result.error)}</pre>')
    if result.restarted:
        parts.append('<div class="err">the sandbox worker was restarted: variables are gone</div>')
    if not result.stdout and not result.error:
        parts.append(f'<div class="muted">no output ({result.duration_s:.3f} s)</div>')
    return wrap("".join(parts))


def show(obj: Any, corpus: Any = None) -> Rich:
    """The rich view of a corpus, hits, prediction (with cited-page text when `corpus` is
    given), ledger, cell result or trajectory (typed, or its records)."""
    from rlm_docs.engine.records import Trajectory
    from rlm_docs.notebook.trajectory_view import TrajectoryView

    kind = type(obj).__name__
    if kind == "Corpus":
        return Rich(corpus_html(obj), corpus_text(obj))
    if kind == "Prediction":
        return Rich(prediction_html(obj, corpus), prediction_text(obj, corpus))
    if kind == "Ledger":
        return Rich(ledger_html(obj), ledger_text(obj))
    if kind == "CellOutcome":
        return Rich(cell_html(obj), cell_text(obj))
    if kind == "Hit":
        obj = [obj]
    if isinstance(obj, Trajectory):
        obj = TrajectoryView(obj)
    if isinstance(obj, TrajectoryView):
        return Rich(obj._repr_html_(), repr(obj))
    if isinstance(obj, Iterable) and not isinstance(obj, str | bytes | dict):
        items = list(obj)
        if all(type(i).__name__ == "Hit" for i in items):
            return Rich(hits_html(items), hits_text(items))
        if items and all(isinstance(i, dict) and "type" in i for i in items):
            view = TrajectoryView(items)
            return Rich(view._repr_html_(), repr(view))
    raise TypeError(f"show(): no rich view for {kind}")


def _pretty(text: Callable[[Any], str]) -> Callable[[Any, Any, bool], None]:
    """An IPython pretty printer (`printer(obj, p, cycle)`) from a `*_text` function."""

    def printer(obj: Any, p: Any, cycle: bool) -> None:
        p.text(text(obj))

    return printer


def register(shell: Any = None) -> None:
    """Render rlm-docs objects with these views in IPython: HTML in `shell`'s display formatter
    (default: the running shell, if any) and plain text through `IPython.lib.pretty`, for new
    shells and `pretty()` too. Plain `repr()` keeps each class's own (debugging) repr.

    Called when `rlm_docs.notebook` is imported, by `%load_ext rlm_docs`, and by `import
    rlm_docs` inside a running IPython, so a notebook shows them without asking."""
    from IPython import get_ipython
    from IPython.lib import pretty

    from rlm_docs.corpus import Corpus, Hit
    from rlm_docs.engine.prediction import Prediction
    from rlm_docs.governor.ledger import Ledger
    from sandbox.limits import CellOutcome

    html = {
        Corpus: corpus_html,
        Hit: hit_html,
        Prediction: prediction_html,
        Ledger: ledger_html,
        CellOutcome: cell_html,
    }
    text: dict[type, Callable[[Any], str]] = {
        Hit: hit_text,
        Prediction: prediction_text,
        CellOutcome: cell_text,
    }
    for cls, view in text.items():
        pretty.for_type(cls, _pretty(view))
    shell = shell if shell is not None else get_ipython()
    if shell is None:
        return
    formatters = shell.display_formatter.formatters
    for cls, view in html.items():
        formatters["text/html"].for_type(cls, view)
    for cls, view in text.items():
        formatters["text/plain"].for_type(cls, _pretty(view))
