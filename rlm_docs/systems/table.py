"""The table of every registered system, as docs/systems.md shows it: written from the
declarations, so the docs cannot list a system, setting or flag that is not there.

`python -m rlm_docs.systems.table` prints it (a test checks docs/systems.md against it).
"""

import dataclasses

from rlm_docs.systems.declaration import Declaration
from rlm_docs.systems.registry import declarations


def _options(decl: Declaration) -> str:
    flags = []
    for f in decl.flags():
        flag = f.metadata["flag"]
        unset = f.default is None or f.default == "" or isinstance(f.default, bool)
        shown = "" if unset else f" (default {f.default})"
        flags.append(f"`{flag}`{shown}")
    return ", ".join(flags) or "none"


def _reading(decl: Declaration) -> str:
    r = decl.reading
    if r.cells:
        return "code cells, sub-calls, child runs"
    tags = ["search-first" + (" (any turn)" if r.search_first == "any-turn" else "")]
    tags = tags if r.search_first else []
    tags += ["whole-context"] * r.whole_context + ["map-reduce"] * r.reduce_after_map
    tags += list(r.tags)
    return "fixed turns; tags: " + ", ".join(tags)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def systems_table() -> str:
    """Markdown: system, what it does, its settings, its option flags, how its run is read."""
    rows = [
        "| system | what it does | settings | options (flags) | decomposition record |",
        "|---|---|---|---|---|",
    ]
    for decl in declarations():
        cells = (
            f"`{decl.name}`",
            decl.summary,
            decl.settings.format(**dataclasses.asdict(decl.options())) or "—",
            _options(decl),
            _reading(decl),
        )
        rows.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(systems_table(), end="")
