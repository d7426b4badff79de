"""The Python-level layer: RestrictedPython compilation plus guards and safe builtins.

RestrictedPython rewrites attribute access, item access, writes, iteration and in-place
operators into calls to the guard functions defined here. The policy: names starting with `_`
are refused everywhere (at compile time by RestrictedPython, at run time by `guarded_getattr`);
functions, frames, code, tracebacks and generators expose no attributes (no `gi_frame`, no
`__self__`); no attribute or item lookup may return a module, frame, code object or metaclass;
only lists, dicts, sets and instances of classes defined in the sandbox can be written to;
`str.format` is replaced by a formatter that resolves fields through the same guards. This
layer is not trusted alone: the worker process is also confined by the OS (see `confine`).
"""

import _string  # type: ignore[import-not-found]  # the C helper behind string.Formatter
import ast
import builtins
import collections
import operator
import string
import sys
import types
import weakref
from collections.abc import Callable
from typing import Any

from RestrictedPython.Guards import guarded_iter_unpack_sequence, guarded_unpack_sequence
from RestrictedPython.transformer import (
    IOPERATOR_TO_STR,
    RestrictingNodeTransformer,
    copy_locations,
)

DISPLAY_HOOK = "_display_"

_OPAQUE = (
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.CodeType,
    types.FrameType,
    types.TracebackType,
    types.MethodWrapperType,
    types.WrapperDescriptorType,
    types.MethodDescriptorType,
    types.ClassMethodDescriptorType,
    types.GetSetDescriptorType,
    types.MemberDescriptorType,
    types.ModuleType,
    types.CellType,
)
_GENERATORS = (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)
_GENERATOR_METHODS = frozenset({"send", "throw", "close"})
_FORBIDDEN_VALUES = (types.ModuleType, types.FrameType, types.CodeType, types.TracebackType)
_DENIED_NAMES = frozenset({"mro"})
_WRITABLE = (list, dict, set, bytearray, collections.deque)

_user_classes: "weakref.WeakSet[type]" = weakref.WeakSet()


def _refuse(obj: Any, name: str) -> AttributeError:
    return AttributeError(
        f"access to attribute {name!r} of {type(obj).__name__} is not allowed in the sandbox"
    )


def _forbidden(value: Any) -> bool:
    return isinstance(value, _FORBIDDEN_VALUES) or (
        isinstance(value, type) and issubclass(value, type)
    )


def _check_value(value: Any, what: str) -> Any:
    if _forbidden(value):
        raise AttributeError(f"{what} is not available in the sandbox")
    return value


def _check_name(name: Any) -> str:
    """Only exact `str` names: a subclass could override `startswith` or `__eq__` and so
    defeat every check below."""
    if type(name) is not str:
        raise TypeError("attribute name must be a string")
    return name


# Dict methods that hand out stored values without going through `guarded_getitem`. Any dict
# that once held a module (a leaked globals dict, say) must not yield it through these either.
_DICT_READERS = frozenset({"get", "pop", "popitem", "setdefault", "values", "items"})


def _checked_dict_reader(method: Callable[..., Any], name: str) -> Callable[..., Any]:
    def reader(*args: Any, **kwargs: Any) -> Any:
        result = method(*args, **kwargs)
        if name in ("values", "items"):
            for item in result:
                if _forbidden(item) or (isinstance(item, tuple) and any(map(_forbidden, item))):
                    raise AttributeError("a value of this dict is not available in the sandbox")
        elif name == "popitem":
            _check_value(result[1], "the popped value")
        else:
            _check_value(result, f"the value returned by dict.{name}()")
        return result

    return reader


class _SafeFormatter(string.Formatter):
    """`str.format` whose `{0.attr}` / `{0[key]}` fields go through the sandbox guards."""

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> tuple[Any, Any]:
        first, rest = _string.formatter_field_name_split(field_name)
        obj = self.get_value(first, args, kwargs)
        for is_attr, key in rest:
            obj = guarded_getattr(obj, key) if is_attr else guarded_getitem(obj, key)
        return obj, first


_FORMATTER = _SafeFormatter()


def _is_str_like(obj: Any) -> bool:
    """A str, or the class of one: `str` itself or any subclass (a sandbox-made `class S(str)`
    inherits the unguarded `format`, so the class must be caught, not only `str`)."""
    return isinstance(obj, str) or (isinstance(obj, type) and issubclass(obj, str))


def _safe_str_attr(obj: Any, name: str) -> Callable[..., str]:
    if isinstance(obj, type):  # unbound: S.format(template, *args)
        if name == "format":
            return lambda template, *args, **kwargs: _FORMATTER.vformat(template, args, kwargs)
        return lambda template, mapping: _FORMATTER.vformat(template, (), mapping)
    if name == "format":
        return lambda *args, **kwargs: _FORMATTER.vformat(obj, args, kwargs)
    return lambda mapping: _FORMATTER.vformat(obj, (), mapping)


_MISSING = object()


def guarded_getattr(obj: Any, name: str, default: Any = _MISSING) -> Any:
    """`obj.name` under the sandbox policy (also the `getattr` builtin)."""
    _check_name(name)
    if (
        name.startswith("_")
        or name in _DENIED_NAMES
        or isinstance(obj, _OPAQUE)
        or (isinstance(obj, _GENERATORS) and name not in _GENERATOR_METHODS)
    ):
        raise _refuse(obj, name)
    if name in ("format", "format_map") and _is_str_like(obj):
        return _safe_str_attr(obj, name)
    try:
        value = getattr(obj, name)
    except AttributeError:
        if default is _MISSING:
            raise
        return default
    if name in _DICT_READERS and (
        isinstance(obj, dict) or (isinstance(obj, type) and issubclass(obj, dict))
    ):
        return _checked_dict_reader(value, name)
    return _check_value(value, f"attribute {name!r} of {type(obj).__name__}")


def guarded_hasattr(obj: Any, name: str) -> bool:
    """`hasattr` that answers False for anything the guard refuses."""
    _check_name(name)
    try:
        guarded_getattr(obj, name)
    except AttributeError:
        return False
    return True


def guarded_getitem(obj: Any, key: Any) -> Any:
    """`obj[key]`, refusing module/frame/code values."""
    return _check_value(obj[key], f"item {key!r}")


def guarded_write(obj: Any) -> Any:
    """Target of `obj.x = ...` / `obj[k] = ...`: only containers and sandbox-made instances."""
    if isinstance(obj, _WRITABLE) or type(obj) in _user_classes:
        return obj
    raise TypeError(f"cannot modify {type(obj).__name__} objects in the sandbox")


def guarded_setattr(obj: Any, name: str, value: Any) -> None:
    """The `setattr` builtin: public names of sandbox-made instances only."""
    if _check_name(name).startswith("_"):
        raise AttributeError(f"setting attribute {name!r} is not allowed in the sandbox")
    setattr(guarded_write(obj), name, value)


def guarded_dir(obj: Any = _MISSING) -> list[str]:
    """`dir(obj)` limited to public names (no argument: not available)."""
    if obj is _MISSING:
        raise TypeError("dir() needs an argument in the sandbox; use SHOW_VARS() or variables")
    if isinstance(obj, _OPAQUE):
        return []
    return [name for name in dir(obj) if not name.startswith("_") and name not in _DENIED_NAMES]


def guarded_type(*args: Any) -> type:
    """One-argument `type(x)`; creating classes this way is refused."""
    if len(args) != 1:
        raise TypeError("type() takes exactly one argument in the sandbox (use a class statement)")
    if _forbidden(args[0]):
        raise TypeError("type() of this object is not available in the sandbox")
    cls = type(args[0])
    if issubclass(cls, type):
        raise TypeError("type() of a class is not available in the sandbox")
    return cls


def _metaclass(name: str, bases: tuple[Any, ...], namespace: dict[str, Any]) -> type:
    """Metaclass of sandbox `class` statements: records the class so its instances are writable."""
    for base in bases:
        if isinstance(base, type) and issubclass(base, type):
            raise TypeError("metaclasses cannot be subclassed in the sandbox")
    cls = type(name, bases, namespace)
    _user_classes.add(cls)
    return cls


_INPLACE: dict[str, Callable[[Any, Any], Any]] = {
    "+=": operator.iadd,
    "-=": operator.isub,
    "*=": operator.imul,
    "/=": operator.itruediv,
    "//=": operator.ifloordiv,
    "%=": operator.imod,
    "**=": operator.ipow,
    "<<=": operator.ilshift,
    ">>=": operator.irshift,
    "&=": operator.iand,
    "^=": operator.ixor,
    "|=": operator.ior,
    "@=": operator.imatmul,
}


def _inplacevar(op: str, target: Any, value: Any) -> Any:
    return _INPLACE[op](target, value)


_SAFE_NAMES = [
    "abs",
    "all",
    "any",
    "ascii",
    "bin",
    "bool",
    "bytearray",
    "bytes",
    "callable",
    "chr",
    "classmethod",
    "complex",
    "dict",
    "divmod",
    "enumerate",
    "filter",
    "float",
    "format",
    "frozenset",
    "hash",
    "hex",
    "id",
    "int",
    "isinstance",
    "issubclass",
    "iter",
    "len",
    "list",
    "map",
    "max",
    "min",
    "next",
    "object",
    "oct",
    "ord",
    "pow",
    "property",
    "range",
    "repr",
    "reversed",
    "round",
    "set",
    "slice",
    "sorted",
    "staticmethod",
    "str",
    "sum",
    "tuple",
    "zip",
    "True",
    "False",
    "None",
    "NotImplemented",
    "Ellipsis",
]


def _exception_names() -> list[str]:
    return [
        name
        for name, value in vars(builtins).items()
        if isinstance(value, type) and issubclass(value, BaseException)
    ]


def make_builtins(
    import_module: Callable[..., Any],
    print_factory: Callable[[Any], Any],
    display: Callable[[Any], None],
) -> dict[str, Any]:
    """The `__builtins__` of sandbox code: safe builtins plus the RestrictedPython guard hooks."""
    table: dict[str, Any] = {name: getattr(builtins, name) for name in _SAFE_NAMES}
    table.update({name: getattr(builtins, name) for name in _exception_names()})
    table.update(
        getattr=guarded_getattr,
        hasattr=guarded_hasattr,
        setattr=guarded_setattr,
        dir=guarded_dir,
        type=guarded_type,
        __import__=import_module,
        __build_class__=builtins.__build_class__,
        __metaclass__=_metaclass,
        _getattr_=guarded_getattr,
        _getitem_=guarded_getitem,
        _write_=guarded_write,
        _getiter_=iter,
        _iter_unpack_sequence_=guarded_iter_unpack_sequence,
        _unpack_sequence_=guarded_unpack_sequence,
        _inplacevar_=_inplacevar,
        _apply_=lambda func, *args, **kwargs: func(*args, **kwargs),
        _print_=print_factory,
    )
    table[DISPLAY_HOOK] = display
    return table


_IMPURE = (
    ast.Call,
    ast.Await,
    ast.Yield,
    ast.YieldFrom,
    ast.NamedExpr,
    ast.Lambda,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)


def _evaluates_plainly(node: ast.AST) -> bool:
    """True if evaluating `node` twice has the same effect as once: names, constants,
    attribute and item lookups, operators; no calls, walrus or comprehensions."""
    return not any(isinstance(child, _IMPURE) for child in ast.walk(node))


_VISITORS: dict[type, str] = {}


class _CellTransformer(RestrictingNodeTransformer):
    """RestrictedPython's transformer, plus `x[k] += v` (counting into a dict is the commonest
    thing a model writes): RestrictedPython refuses augmented assignment of items outright. It
    is rewritten to `x[k] = _inplacevar_("+=", x[k], v)`, so the read, the write and the
    operator all go through the same guards as the plain statements would. The container and
    key are evaluated twice, so this is only done when that cannot differ from once (no calls);
    otherwise the refusal says what to write instead."""

    def visit(self, node: ast.AST) -> Any:
        """`ast.NodeVisitor.visit` with the method name made once per node class: the
        original builds `"visit_" + name` anew for every node, a string the interpreter's
        attribute cache has never seen, so each lookup walks the transformer's class dicts."""
        name = _VISITORS.get(type(node))
        if name is None:
            name = _VISITORS[type(node)] = sys.intern("visit_" + type(node).__name__)
        return getattr(self, name, self.generic_visit)(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> Any:
        target = node.target
        if not isinstance(target, ast.Subscript):
            return super().visit_AugAssign(node)
        if not (_evaluates_plainly(target.value) and _evaluates_plainly(target.slice)):
            self.error(
                node,
                "Augmented assignment of an item whose container or key calls a function is "
                "not allowed; assign the key to a variable first (k = f(); d[k] += 1).",
            )
            return node
        load = ast.Subscript(target.value, target.slice, ast.Load())
        store = ast.Subscript(target.value, target.slice, ast.Store())
        copy_locations(load, target)
        copy_locations(store, target)
        load_call = self.visit(load)
        store_target = self.visit(store)
        value = self.visit(node.value)
        operation = ast.Call(
            func=ast.Name("_inplacevar_", ast.Load()),
            args=[ast.Constant(IOPERATOR_TO_STR[type(node.op)]), load_call, value],
            keywords=[],
        )
        new_node = ast.Assign(targets=[store_target], value=operation)
        copy_locations(new_node, node)
        return new_node


class RestrictedSyntaxError(SyntaxError):
    """Code that is valid Python but refused by the restricted policy."""


def compile_cell(source: str, filename: str) -> types.CodeType:
    """Compile a cell under the policy; a final bare expression is passed to the display hook.

    Raises SyntaxError (with the line) for invalid Python and RestrictedSyntaxError for code
    the policy refuses (private names, exec/eval, async, ...).
    """
    tree = ast.parse(source, filename, "exec")
    errors: list[str] = []
    _CellTransformer(errors, [], {}).visit(tree)
    if errors:
        raise RestrictedSyntaxError("; ".join(errors))
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = tree.body[-1]
        display = ast.Expr(ast.Call(ast.Name(DISPLAY_HOOK, ast.Load()), [last.value], []))
        copy_locations(display, last)
        tree.body[-1] = display
    # Every node the transformer adds carries its location (`copy_locations`, as in
    # RestrictedPython's own compile), so the tree is not walked again to fix them.
    return compile(tree, filename, "exec")
