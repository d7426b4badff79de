"""Send modules of `rlm_docs.offline.repl` to the sandbox as one cell of their own source.

The offline policy's REPL code is real Python in real modules (linted, type-checked and unit
tested on the host); the cell the root writes is that source, followed by one call line. The
sandbox's restricted dialect has no annotated assignments and cannot import `typing`,
`collections.abc` or the project, so each module's source is parsed, its annotations and those
imports are dropped (the modules it imports from the package must be shipped before it: they
are then already defined), and the rest is written back with `ast.unparse`. Comments do not
survive that; docstrings do, so the modules keep their explanations in docstrings.
"""

import ast
import functools
import inspect
from types import ModuleType

from rlm_docs import python_ast

PACKAGE = "rlm_docs.offline.repl"
_HOST_ONLY = ("__future__", "typing", "collections.abc")


class _Strip(ast.NodeTransformer):
    """Drops annotations and host-only imports; checks package imports are already shipped."""

    def __init__(self, shipped: set[str]) -> None:
        self.shipped = shipped

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST | None:
        if node.module in _HOST_ONLY:
            return None
        if node.module and node.module.startswith(PACKAGE):
            if node.module not in self.shipped:
                raise ValueError(f"{node.module} must be shipped before the module importing it")
            return None
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        node.returns = None
        for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
            arg.annotation = None
        for star in (node.args.vararg, node.args.kwarg):
            if star is not None:
                star.annotation = None
        self.generic_visit(node)
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST | None:
        if node.value is None:
            return None
        return ast.copy_location(ast.Assign([node.target], node.value), node)


def module_source(module: ModuleType, shipped: set[str]) -> str:
    """The sandbox form of one module's source (see the module docstring)."""
    tree = _Strip(shipped).visit(python_ast.parse(inspect.getsource(module)))
    return ast.unparse(ast.fix_missing_locations(tree))


@functools.cache
def _sources(modules: tuple[ModuleType, ...]) -> str:
    """The modules' sandbox source in order (computed once per module list: sources are
    fixed while the process runs)."""
    shipped: set[str] = set()
    parts = []
    for module in modules:
        parts.append(f"# --- {module.__name__} ---\n{module_source(module, shipped)}")
        shipped.add(module.__name__)
    return "\n\n".join(parts)


def cell(modules: list[ModuleType], call: str) -> str:
    """One REPL cell: the modules' sandbox source in order, then `call`."""
    return f"{_sources(tuple(modules))}\n\n{call.strip()}\n"
