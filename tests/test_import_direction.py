"""Imports run one way: data flows corpus -> sandbox -> engine -> systems -> evaluation, and
presentation (viewer, notebook, serve, MCP, CLI) sits on top. The top-level `sandbox` package sits
below all of `rlm_docs` and imports nothing of it (the host hands it what workers preload).

The allowed edges are written down once, as `LAYERS` below (docs/layout.md's "Import direction"
section shows the same table, and a test here keeps the two equal). A unit is a subpackage of
`rlm_docs` or one of its top-level modules; it may import units of strictly lower layers and
nothing of its own layer or above. Every `import`/`from ... import` counts, also inside functions
and `if TYPE_CHECKING:`, and so does a module path written as a string (`import_module(...)`
targets, lazy export tables, registries): hiding an import in a string does not change where it
points.
"""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "rlm_docs"

LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "version"),
    (
        "resources",
        "atomic",
        "tokens",
        "env",
        "jsonl",
        "terminal_text",
        "number_flags",
        "python_ast",
        "data_sets",
        "private_dir",
        "answer_record",
        "linear_regex",
        "call_purpose",
    ),
    ("templates", "output_paths", "answer_parsing", "trec_labels"),
    ("corpus", "questions"),
    ("repl", "offline"),
    ("models",),
    ("governor", "ingest"),
    ("engine", "bench"),
    ("proxy", "rlms"),
    ("systems",),
    ("eval",),
    ("viewer", "serve", "hub", "export", "tracing"),
    ("notebook", "mcp_server"),
    ("cli",),
    ("rlm_docs", "__main__"),
)
"""Lowest first. `rlm_docs` is the package facade (`rlm_docs/__init__.py`): it re-exports names
from every layer, so it is the top, and nothing inside the package imports it."""

_MODULE_STRING = re.compile(r"rlm_docs(?:\.\w+)+(?::\w+)?")


def _rank() -> dict[str, int]:
    return {unit: level for level, units in enumerate(LAYERS) for unit in units}


def _unit_of_file(path: Path) -> str:
    parts = path.relative_to(PACKAGE).parts
    if parts == ("__init__.py",):
        return "rlm_docs"
    return parts[0].removesuffix(".py")


def _module_of_file(path: Path) -> list[str]:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return parts[:-1] if parts[-1] == "__init__" else parts


def _unit_of_module(module: str) -> str | None:
    """The unit a dotted module path lands in (None: outside rlm_docs)."""
    parts = module.split(".")
    if parts[0] != "rlm_docs":
        return None
    return parts[1] if len(parts) > 1 else "rlm_docs"


def _targets(node: ast.AST, path: Path) -> list[str]:
    """Dotted module paths one AST node imports."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.level:
            package = _module_of_file(path)
            if path.name != "__init__.py":
                package = package[:-1]
            base = package[: len(package) - node.level + 1]
            module = ".".join(base + ([node.module] if node.module else []))
        else:
            module = node.module or ""
        if module == "rlm_docs":  # `from rlm_docs import corpus` names a unit, not the facade
            return [
                f"rlm_docs.{a.name}"
                if (PACKAGE / a.name).is_dir() or (PACKAGE / f"{a.name}.py").is_file()
                else "rlm_docs"
                for a in node.names
            ]
        return [module]
    is_string = isinstance(node, ast.Constant) and isinstance(node.value, str)
    if is_string and _MODULE_STRING.fullmatch(node.value):  # an import path in a string
        module = node.value.split(":")[0]
        unit = module.split(".")[1]  # a dotted name that is no unit (`rlm_docs.budget`) is text
        if (PACKAGE / unit).is_dir() or (PACKAGE / f"{unit}.py").is_file():
            return [module]
    return []


def edges() -> list[tuple[str, int, str, str, str]]:
    """(file, line, importing unit, imported unit, imported module) for every cross-unit
    import in the package."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = _unit_of_file(path)
        rel = str(path.relative_to(ROOT))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), rel)):
            for module in _targets(node, path):
                target = _unit_of_module(module)
                if target is not None and target != source:
                    out.append((rel, node.lineno, source, target, module))
    return out


def test_every_unit_is_in_the_table():
    units = {_unit_of_file(p) for p in PACKAGE.rglob("*.py")}
    missing = sorted(units - set(_rank()))
    assert not missing, f"add these to LAYERS (and docs/layout.md's table): {missing}"


def test_imports_point_down_the_layers():
    rank = _rank()
    wrong = [
        f"{rel}:{line}: {source} (layer {rank[source]}) imports {module} "
        f"({target}, layer {rank.get(target, '?')})"
        for rel, line, source, target, module in edges()
        if rank.get(target, len(LAYERS)) >= rank.get(source, -1)
    ]
    assert not wrong, "imports against the allowed direction:\n" + "\n".join(wrong)


def test_the_sandbox_package_imports_nothing_of_rlm_docs():
    """`sandbox` is usable on its own: no import of `rlm_docs` (nor a module path to it in a
    string, as a preload factory name would be) anywhere in it."""
    wrong = [
        f"{path.relative_to(ROOT)}:{node.lineno}: {module}"
        for path in sorted((ROOT / "sandbox").rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        for module in _targets(node, path)
        if module.split(".")[0] == "rlm_docs"
    ]
    assert (ROOT / "sandbox" / "host.py").is_file()
    assert not wrong, "the sandbox package imports rlm_docs:\n" + "\n".join(wrong)


def test_the_layout_page_shows_the_same_table():
    text = (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")
    section = text.split("## Import direction", 1)[1].split("\n#", 1)[0]
    rows = re.findall(r"^\| (\d+) \| (.+?) \|", section, re.MULTILINE)
    shown = tuple(tuple(re.findall(r"`([\w.]+)`", units)) for _n, units in rows)
    assert [int(n) for n, _ in rows] == list(range(len(rows)))
    assert shown == LAYERS


def test_the_checker_sees_local_string_and_relative_imports(tmp_path):
    """The parser itself: a function-local import, a module path in a string and a relative
    import are all found (so a test that passes is not one that sees nothing)."""
    code = (
        "def f():\n    from rlm_docs.notebook.display import show\n"
        "LAZY = {'x': 'rlm_docs.viewer.page'}\n"
        "from ..engine import rlm\n"
    )
    fake = PACKAGE / "corpus" / "fake.py"
    tree = ast.parse(code)
    found = [m for node in ast.walk(tree) for m in _targets(node, fake)]
    assert sorted(found) == ["rlm_docs.engine", "rlm_docs.notebook.display", "rlm_docs.viewer.page"]
