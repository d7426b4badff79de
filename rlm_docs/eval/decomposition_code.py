"""What the code of a run's cells calls and slices: the code-analysis part of the decomposition
record (`rlm_docs.eval.decomposition`).

Model code is hostile and the record must never fail its question, so a cell that cannot be
parsed counts nothing and a cell too deeply nested to analyse (the parser runs out of recursion
or memory, or a slice bound nests past `MAX_BOUND_DEPTH`) counts in `unanalysed` and as use of
`context` the code does not show. A call is "in the code" when it is written there
(`search(...)` or `corpus.search(...)`), whether or not that line ran.
"""

import ast

from rlm_docs import python_ast

HELPERS = ("files", "page", "pages", "lines", "search", "grep", "locate", "toc", "read_section")
READERS = ("page", "pages", "lines", "read_section")
MAX_BOUND_DEPTH = 100  # nesting of a slice bound's expression past which it is not evaluated


class _TooDeep(Exception):
    """A slice bound nested past `MAX_BOUND_DEPTH`."""


class _Const:
    """The value of a slice bound built from int constants, `len(context)`, + - * //."""

    def __init__(self, length: int) -> None:
        self.length = length

    def value(self, node: ast.AST | None, depth: int = 0) -> int | None:
        """The bound's value; None when it is not constant; `_TooDeep` past the depth limit."""
        if node is None:
            return None
        if depth > MAX_BOUND_DEPTH:
            raise _TooDeep
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = self.value(node.operand, depth + 1)
            return None if inner is None else -inner
        if isinstance(node, ast.Call) and _name(node.func) == "len" and len(node.args) == 1:
            return self.length if _name(node.args[0]) == "context" else None
        if isinstance(node, ast.BinOp):
            a, b = self.value(node.left, depth + 1), self.value(node.right, depth + 1)
            if a is None or b is None:
                return None
            ops = {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b}
            if isinstance(node.op, ast.FloorDiv):
                return a // b if b else None
            return ops.get(type(node.op))
        return None


def _name(node: ast.AST) -> str | None:
    return node.id if isinstance(node, ast.Name) else None


def _helper(call: ast.Call) -> str | None:
    """`search` for `search(...)` and `corpus.search(...)`; None for anything else."""
    func = call.func
    if isinstance(func, ast.Name) and func.id in HELPERS:
        return func.id
    if isinstance(func, ast.Attribute) and _name(func.value) == "corpus":
        return func.attr if func.attr in HELPERS else None
    return None


class CodeFacts:
    """What the cells of one question call and slice, cells in order."""

    def __init__(self) -> None:
        self.helpers: list[str] = []  # corpus helpers called, cells in order, source order
        self.slices = 0
        self.untraced = False  # `context` used other than by constant slices and len(context)
        self.unanalysed = 0  # cells too deeply nested to analyse

    def add(self, code: str, context_chars: int | None) -> list[tuple[int, int]]:
        """Note a cell's helper calls and slices; the `(start, stop)` of its slices of
        `context` whose bounds are constants (none when `context_chars` is None). A cell too
        deeply nested to analyse counts in `unanalysed` and as untraced use of `context`."""
        try:
            return self._add(code, context_chars)
        except (RecursionError, MemoryError, _TooDeep):
            self.unanalysed += 1
            self.untraced = True
            return []

    def _add(self, code: str, context_chars: int | None) -> list[tuple[int, int]]:
        try:
            tree = python_ast.parse(code)
        except (SyntaxError, ValueError):
            return []
        calls: list[tuple[int, int, str]] = []
        constant: list[tuple[int, int]] = []
        slices = 0
        followed: set[int] = set()  # ids of `context` names the analysis accounts for
        uses: list[ast.AST] = []  # every `context` name in the cell
        for node in ast.walk(tree):
            if _name(node) == "context":
                uses.append(node)
            if isinstance(node, ast.Call) and _name(node.func) == "len" and len(node.args) == 1:
                followed.add(id(node.args[0]))
            helper = _helper(node) if isinstance(node, ast.Call) else None
            if helper is not None:
                calls.append((getattr(node, "lineno", 0), getattr(node, "col_offset", 0), helper))
            if (
                isinstance(node, ast.Subscript)
                and _name(node.value) == "context"
                and isinstance(node.slice, ast.Slice)
            ):
                slices += 1
                if context_chars is not None and node.slice.step is None:
                    const = _Const(context_chars)
                    lower, upper = node.slice.lower, node.slice.upper
                    a, b = const.value(lower), const.value(upper)
                    if (lower is None or a is not None) and (upper is None or b is not None):
                        start, stop, _ = slice(a, b).indices(context_chars)
                        constant.append((start, stop))
                        followed.add(id(node.value))
        self.untraced |= any(id(node) not in followed for node in uses)
        self.helpers += [name for *_, name in sorted(calls)]
        self.slices += slices
        return constant
