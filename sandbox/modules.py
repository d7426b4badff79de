"""Allow-listed modules, wrapped so model code never holds a real module object.

Each module exposes only the names listed in `ALLOWED`, copied once at worker start: `re.compile`
works; `re.enum`, `json.decoder` and `functools.update_wrapper` do not exist. Listing names
rather than taking a whole module matters because some public functions are escape hatches:
`functools.update_wrapper`/`wraps` do getattr/setattr with caller-chosen names, and
`singledispatch` evaluates string annotations with the real builtins. Anything that evaluates
code, resolves names or sets attributes by caller-chosen name stays out. A wrapper's `__name__`
is not a key of `sys.modules`, so `from json import decoder` cannot fall back to the real
submodule. Everything is imported before the worker drops privileges, because nothing new can be
imported afterwards.

Besides the standard library, a host allows its own modules through its preload
(`Preloaded.modules`, in the same form as `ALLOWED`).
"""

import importlib
import types
from collections.abc import Mapping
from typing import Any

_MATH = (
    "acos acosh asin asinh atan atan2 atanh cbrt ceil comb copysign cos cosh degrees dist e erf "
    "erfc exp exp2 expm1 fabs factorial floor fmod frexp fsum gamma gcd hypot inf isclose "
    "isfinite isinf isnan isqrt lcm ldexp lgamma log log10 log1p log2 modf nan nextafter perm pi "
    "pow prod radians remainder sin sinh sqrt sumprod tan tanh tau trunc ulp"
)
_CMATH = (
    "acos acosh asin asinh atan atanh cos cosh e exp inf infj isclose isfinite isinf isnan log "
    "log10 nan nanj phase pi polar rect sin sinh sqrt tan tanh tau"
)

ALLOWED: dict[str, str] = {
    "re": "A ASCII DOTALL I IGNORECASE M MULTILINE NOFLAG S U UNICODE VERBOSE X Match Pattern "
    "compile error escape findall finditer fullmatch match search split sub subn",
    "json": "JSONDecodeError dumps loads",
    "math": _MATH,
    "cmath": _CMATH,
    "statistics": "StatisticsError correlation covariance fmean geometric_mean harmonic_mean "
    "linear_regression mean median median_grouped median_high median_low mode multimode "
    "pstdev pvariance quantiles stdev variance NormalDist",
    "collections": "Counter OrderedDict defaultdict deque namedtuple",
    "itertools": "accumulate batched chain combinations combinations_with_replacement compress "
    "count cycle dropwhile filterfalse groupby islice pairwise permutations product repeat "
    "starmap takewhile tee zip_longest",
    "functools": "cache cmp_to_key lru_cache partial reduce",
    "datetime": "MAXYEAR MINYEAR UTC date datetime time timedelta timezone tzinfo",
    "decimal": "Context Decimal DecimalException DivisionByZero Inexact InvalidOperation "
    "Overflow Rounded Underflow getcontext localcontext ROUND_05UP ROUND_CEILING ROUND_DOWN "
    "ROUND_FLOOR ROUND_HALF_DOWN ROUND_HALF_EVEN ROUND_HALF_UP ROUND_UP",
    "fractions": "Fraction",
    "textwrap": "TextWrapper dedent fill indent shorten wrap",
    "difflib": "Differ SequenceMatcher context_diff get_close_matches ndiff unified_diff",
    "heapq": "heapify heappop heappush heappushpop heapreplace merge nlargest nsmallest",
    "bisect": "bisect bisect_left bisect_right insort insort_left insort_right",
    "random": "Random betavariate choice choices expovariate gauss getrandbits lognormvariate "
    "normalvariate randbytes randint random randrange sample seed shuffle triangular uniform",
    "unicodedata": "bidirectional category combining decimal decomposition digit "
    "east_asian_width is_normalized lookup mirrored name normalize numeric unidata_version",
    "calendar": "Calendar MONDAY TUESDAY WEDNESDAY THURSDAY FRIDAY SATURDAY SUNDAY day_abbr "
    "day_name isleap leapdays month_abbr month_name monthcalendar monthrange timegm weekday",
    "time": "gmtime localtime mktime monotonic monotonic_ns perf_counter perf_counter_ns "
    "process_time process_time_ns sleep strftime strptime struct_time time time_ns",
}

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
    """A read-only view of an allow-listed module: its listed names and nothing else."""

    def __repr__(self) -> str:
        return f"<module {self.__module_name!r} (sandboxed)>"

    def __getattr__(self, attr: str) -> Any:
        raise AttributeError(
            f"module {self.__module_name!r} has no attribute {attr!r} in the sandbox "
            "(only common functions are available; submodules and private names are not)"
        )


def _wrap(name: str, names: str) -> SafeModule:
    module = importlib.import_module(name)
    public = {key: getattr(module, key) for key in names.split() if hasattr(module, key)}
    wrapper = SafeModule(**public)
    object.__setattr__(wrapper, "_SafeModule__module_name", name)
    # `from json import decoder` looks up sys.modules[f"{__name__}.decoder"] when the
    # attribute is missing: a name with a space is never a key there.
    object.__setattr__(wrapper, "__name__", f"{name} (sandboxed)")
    return wrapper


def load_modules(extra: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Import every module the sandbox may need (call once, before confinement): the wrapped
    allow-listed modules by name (ALLOWED, plus `extra` in the same form, from the preload),
    plus the real INTERNAL ones."""
    for name in PRELOAD:
        importlib.import_module(name)
    allowed = {**ALLOWED, **(extra or {})}
    modules: dict[str, Any] = {name: _wrap(name, names) for name, names in allowed.items()}
    modules.update({name: importlib.import_module(name) for name in INTERNAL})
    return modules
