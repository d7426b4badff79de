"""What the root model is shown after its cells ran, rendered from the turn's `CodeBlock` records.

The engine's own notes (a cell's warning, the reset of a finishing turn that raised) are written
here too. One renderer per prompt family, chosen by the prompt's name: `madqa` keeps rlms'
format (every block is echoed back with its output), `docs` shows only what is new (the model
has its code in its own reply). Both read the same record fields: what a cell printed
(`stdout`), the engine's warning about it (`extra["warning"]`, e.g. a page cited unread), its
error (`stderr`) and whether the worker was restarted. The records are what the trajectory
keeps, so what the model saw can be rebuilt from a trajectory file.
"""

from collections.abc import Callable

from rlm_docs.engine.records import CodeBlock
from sandbox.output import bounded

NO_CODE = (
    "No code was run: write Python in ```repl``` blocks, or finish with "
    "FINAL(answer) / FINAL_VAR(variable) on its own line outside code."
)
RESTARTED = "\n[The REPL was restarted: variables from earlier turns are gone.]"
UNREADY = (
    'answer["ready"] was set, but code in this turn raised an error, so the run did not '
    'finish. Fix the error, then set answer["ready"] = True again.'
)


def unread_warning(pages: list[tuple[str, int]]) -> str:
    """The warning on a cell that cited pages it had not read (allowed: a search snippet may
    be enough, but the model should know it has not seen the page)."""
    shown = ", ".join(f"{doc} p.{page}" for doc, page in pages)
    return (
        f"\n[note: cited without reading it with page/pages/lines/read_section: {shown}; "
        "read a page before relying on it]\n"
    )


def warning(block: CodeBlock) -> str:
    """The engine's note on a cell (empty when there is none)."""
    return str(block.result.extra.get("warning", ""))


def cell_output(block: CodeBlock) -> str:
    """A cell's output as the model sees it: printed text, warning, error, restart."""
    out = block.result.stdout + warning(block)
    if block.result.stderr:
        out += ("\n" if out else "") + block.result.stderr
    if block.result.restarted:
        out += RESTARTED
    return out


def _docs(blocks: list[CodeBlock]) -> list[str]:
    parts = []
    for i, block in enumerate(blocks, 1):
        label = f"Output of cell {i}:" if len(blocks) > 1 else "Output:"
        parts.append(f"{label}\n{cell_output(block) or '(nothing printed)'}")
    return parts


def _madqa(blocks: list[CodeBlock]) -> list[str]:
    return [
        f"Code executed:\n```python\n{b.code}\n```\n\nREPL output:\n{cell_output(b) or 'No output'}"
        for b in blocks
    ]


RENDERERS: dict[str, Callable[[list[CodeBlock]], list[str]]] = {"docs": _docs, "madqa": _madqa}


def render(prompt: str, blocks: list[CodeBlock], max_chars: int) -> str:
    """The feedback message for the cells of one turn under root prompt `prompt`, bounded."""
    if not blocks:
        return NO_CODE
    return bounded("\n\n".join(RENDERERS[prompt](blocks)), max_chars)
