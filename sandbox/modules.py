"""Allow-listed standard modules, wrapped so model code never holds a real module object.

A wrapper exposes only the module's public attributes that are not themselves modules, copied
once at worker start: `re.compile` works, `re.enum` / `json.decoder` do not exist, and
assigning to a wrapper is refused by the write guard. Everything is imported before the worker
drops privileges, because nothing new can be imported afterwards.
"""

import importlib
import types
from typing import Any

ALLOWED = (
    "re",
    "json",
    "math",
    "cmath",
    "statistics",
    "collections",
    "itertools",
    "functools",
    "datetime",
    "decimal",
    "fractions",
    "textwrap",
    "difflib",
    "heapq",
    "bisect",
    "random",
    "unicodedata",
    "calendar",
    "time",
)

# Private modules that C code (datetime.strptime) imports through the sandbox's `__import__`.
# Sandbox code cannot name them: RestrictedPython refuses import names starting with `_`.
INTERNAL = ("_strptime",)

# Imported lazily by the modules above (codecs, strptime, locale-aware regex); loaded up front.
PRELOAD = (
    "locale",
    "encodings.latin_1",
    "encodings.ascii",
    "encodings.utf_16",
    "encodings.utf_32",
    "encodings.cp1252",
    "encodings.idna",
    "encodings.unicode_escape",
    "encodings.raw_unicode_escape",
)


class SafeModule(types.SimpleNamespace):
    """A read-only view of an allow-listed module (no module-valued or private attributes)."""

    def __repr__(self) -> str:
        return f"<module {self.__module_name!r} (sandboxed)>"

    def __getattr__(self, attr: str) -> Any:
        raise AttributeError(
            f"module {self.__module_name!r} has no attribute {attr!r} in the sandbox "
            "(submodules and private names are not available)"
        )


def _wrap(name: str) -> SafeModule:
    module = importlib.import_module(name)
    public = {
        key: value
        for key, value in vars(module).items()
        if not key.startswith("_") and not isinstance(value, types.ModuleType)
    }
    wrapper = SafeModule(**public)
    object.__setattr__(wrapper, "_SafeModule__module_name", name)
    object.__setattr__(wrapper, "__name__", name)
    return wrapper


def load_modules() -> dict[str, Any]:
    """Import every module the sandbox may need (call once, before confinement): the wrapped
    allow-listed modules by name, plus the real INTERNAL ones."""
    for name in PRELOAD:
        importlib.import_module(name)
    modules: dict[str, Any] = {name: _wrap(name) for name in ALLOWED}
    modules.update({name: importlib.import_module(name) for name in INTERNAL})
    return modules
