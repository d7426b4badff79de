"""Escape attempts against the sandbox: each is blocked with a clear error, the session keeps
working, and the host process is untouched."""

import os

import pytest

from sandbox import Limits, Sandbox
from sandbox.confine import worker_uid

REFUSED = "refused by the sandbox"
GUARD = "is not allowed in the sandbox"
NO_MODULE = "is not available in the sandbox"
READ_ONLY = "cannot modify"

HOST_STATE = {"value": "untouched"}


class HostService:
    """A host object whose bound method is exposed; the sandbox must not reach the object."""

    secret = "sk-host-secret"

    def lookup(self, key: str) -> str:
        return f"value of {key}"


ATTACKS = [
    # class / subclass walks
    ("subclasses_literal", "().__class__.__bases__[0].__subclasses__()", REFUSED),
    ("subclasses_getattr", "getattr((), '__cl' + 'ass__')", GUARD),
    ("mro_method", "type(()).mro()", GUARD),
    ("mro_user_class", "class A:\n    pass\nA.mro()", GUARD),
    ("type_three_args", "type('X', (object,), {'y': 1})", "type() takes exactly one argument"),
    ("type_of_type", "type(type(1))", "type() of a class is not available"),
    ("metaclass_subclass", "class M(type):\n    pass", "TypeError"),
    ("object_subclasses_getattr", "getattr(object, '__subclasses__')()", GUARD),
    # frame walking
    ("generator_frame", "g = (x for x in [1])\ng.gi_frame.f_back", REFUSED),
    ("generator_frame_getattr", "def gen():\n    yield 1\ngetattr(gen(), 'gi_frame')", GUARD),
    ("generator_code", "def gen():\n    yield 1\ngetattr(gen(), 'gi_code')", GUARD),
    ("traceback_attr", "try:\n    1/0\nexcept Exception as e:\n    e.__traceback__", REFUSED),
    (
        "traceback_getattr",
        "try:\n    1/0\nexcept Exception as e:\n    getattr(getattr(e, '__traceback__'), 'tb_frame')",
        GUARD,
    ),
    ("coroutine", "async def f():\n    pass", REFUSED),
    ("function_globals", "getattr(lambda: 0, '__globals__')", GUARD),
    ("function_code", "(lambda: 0).__code__", REFUSED),
    ("match_class_pattern", "match 1:\n    case int(__class__=c):\n        c", REFUSED),
    ("match_attr_pattern", "import re\nmatch re:\n    case object(enum=e):\n        e", REFUSED),
    # builtins, import, eval, exec, compile
    ("builtins_name", "__builtins__", REFUSED),
    ("dunder_import", "__import__('os')", REFUSED),
    ("eval", "eval('1 + 1')", "Eval calls are not allowed"),
    ("exec", "exec('x = 1')", "Exec calls are not allowed"),
    ("compile", "compile('1', 'f', 'eval')", "name 'compile' is not defined"),
    ("globals", "globals()", "name 'globals' is not defined"),
    ("vars", "vars()", "name 'vars' is not defined"),
    ("open", "open('/etc/passwd').read()", "name 'open' is not defined"),
    ("import_builtins", "import builtins", "reserved name"),
    ("import_importlib", "import importlib", NO_MODULE),
    ("import_private", "import _strptime", REFUSED),
    # format-string attribute access
    ("str_format_attr", "'{0.__class__.__mro__}'.format(1)", GUARD),
    ("str_format_unbound", "str.format('{0.__class__}', 1)", GUARD),
    ("str_format_map", "'{x.__init__.__globals__}'.format_map({'x': 1})", GUARD),
    ("fstring_attr", "f'{(1).__class__}'", REFUSED),
    ("string_formatter", "import string", NO_MODULE),
    # operator / functional indirection
    ("operator_module", "import operator", NO_MODULE),
    ("partial_getattr", "import functools\nfunctools.partial(getattr, 1)('__class__')", GUARD),
    ("reduce_getattr", "import functools\nfunctools.reduce(getattr, ['__class__'], 1)", GUARD),
    ("map_getattr", "list(map(getattr, [1], ['__class__']))", GUARD),
    ("bound_builtin_self", "getattr([].append, '__self__')", GUARD),
    # module reach
    ("re_enum_sys", "import re\nre.enum.sys.modules['os']", "has no attribute 'enum'"),
    ("from_re_import_enum", "from re import enum", "cannot import name 'enum'"),
    ("json_decoder_sys", "import json\njson.decoder", "has no attribute 'decoder'"),
    ("collections_abc", "import collections.abc", NO_MODULE),
    ("module_private", "import random\ngetattr(random, '_inst')", GUARD),
    ("typing", "import typing", NO_MODULE),
    ("dataclasses", "import dataclasses", NO_MODULE),
    ("gc", "import gc\ngc.get_objects()", NO_MODULE),
    ("ctypes", "import ctypes", NO_MODULE),
    ("mmap", "import mmap", NO_MODULE),
    ("pickle", "import pickle", NO_MODULE),
    ("inspect", "import inspect", NO_MODULE),
    ("sys", "import sys", NO_MODULE),
    ("sandbox_package", "import sandbox", NO_MODULE),
    ("own_package", "import rlm_docs.repl", NO_MODULE),
    # OS: environment, sockets, processes, files
    ("proc_environ", "open('/proc/self/environ').read()", "name 'open' is not defined"),
    ("os_environ", "import os\nos.environ", NO_MODULE),
    ("socket", "import socket", NO_MODULE),
    ("os_system", "import os\nos.system('id')", NO_MODULE),
    ("subprocess", "import subprocess", NO_MODULE),
    ("fork_multiprocessing", "import multiprocessing", NO_MODULE),
    ("kill_signal", "import signal", NO_MODULE),
    ("write_outside", "import pathlib\npathlib.Path('/tmp/escape').write_text('x')", NO_MODULE),
    ("shutil", "import shutil", NO_MODULE),
    # overwriting shared modules and host functions
    ("overwrite_module_attr", "import re\nre.compile = None", READ_ONLY),
    ("overwrite_module_setattr", "import re\nsetattr(re, 'compile', None)", READ_ONLY),
    ("overwrite_decimal_context", "import decimal\ndecimal.getcontext().prec = 1", READ_ONLY),
    ("overwrite_builtin_type", "str.upper = None", READ_ONLY),
    ("host_function_attr_write", "llm_query.x = 1", READ_ONLY),
    # reaching host objects through functions
    ("host_function_self", "getattr(service_lookup, '__self__').secret", GUARD),
    ("host_function_func", "service_lookup.func", GUARD),
    ("host_function_closure", "service_lookup.__closure__", REFUSED),
    ("host_function_wrapped", "getattr(llm_query, '__wrapped__')", GUARD),
    # augmented item assignment goes through the same guards as a plain one
    ("augassign_module_attr", "import re\nre.compile += 1", REFUSED),
    ("augassign_builtin_str", "s = 'ab'\ns[0] += 'x'", "TypeError"),
    ("augassign_private_key", "d = {}\nd.__class__ += 1", REFUSED),
    ("augassign_call_in_key", "d = {'a': 1}\nd[str('a')] += 1", REFUSED),
]


@pytest.fixture(scope="module")
def sentinel(tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("host") / "sentinel.txt"
    path.write_text("host file")
    return path


@pytest.fixture(scope="module")
def sb():
    service = HostService()
    functions = {"llm_query": lambda prompt: f"echo: {prompt}", "service_lookup": service.lookup}
    with Sandbox(limits=Limits(wall_s=10), functions=functions) as box:
        yield box


def test_table_is_large_enough():
    assert len(ATTACKS) >= 40
    assert len({name for name, _, _ in ATTACKS}) == len(ATTACKS)


@pytest.mark.parametrize(
    ("code", "fragment"), [a[1:] for a in ATTACKS], ids=[a[0] for a in ATTACKS]
)
def test_attack_is_blocked(sb, sentinel, monkeypatch, code, fragment):
    monkeypatch.setenv("RLM_SANDBOX_SENTINEL", "host-env")
    pid = sb.pid
    result = sb.run(code)
    assert result.error is not None, f"not blocked: {code!r} printed {result.stdout!r}"
    assert fragment in result.error
    assert "sk-host-secret" not in result.stdout + result.error
    assert not result.restarted and sb.pid == pid
    # the session still works and the host is unaffected
    assert sb.run("1 + 1").stdout == "2\n"
    assert sb.run("llm_query('ping')").stdout == "'echo: ping'\n"
    assert HOST_STATE == {"value": "untouched"}
    assert os.environ["RLM_SANDBOX_SENTINEL"] == "host-env"
    assert sentinel.read_text() == "host file"


def test_augmented_item_assignment_counts_and_guards(sb):
    """`d[k] += 1` works on the containers a cell may write, evaluating container and key once
    in effect, and an in-place operator keeps aliasing (a list extended, not replaced)."""
    code = (
        "c = {}\nfor w in ['a', 'b', 'a']:\n    c[w] = c.get(w, 0)\n    c[w] += 1\n"
        "grid = [[0, 0], [0, 0]]\ngrid[1][0] -= 3\n"
        "xs = [1]\nbox = {'k': xs}\nbox['k'] += [2]\n"
        "print(c, grid, xs, box['k'] is xs)"
    )
    assert sb.run(code).stdout == "{'a': 2, 'b': 1} [[0, 0], [-3, 0]] [1, 2] True\n"
    frozen = sb.run("t = (1, 2)\nt[0] += 1")
    assert frozen.error is not None and "TypeError" in frozen.error


def test_host_functions_expose_nothing(sb):
    assert sb.run("dir(llm_query)").stdout == "[]\n"
    assert sb.run("dir(service_lookup)").stdout == "[]\n"
    assert sb.run("service_lookup('k')").stdout == "'value of k'\n"
    assert "'__self__'" in sb.run("getattr(service_lookup, '__self__', None)").error


def test_rebinding_a_sandbox_name_is_the_models_choice_deleting_it_restores_it(sb):
    assert sb.run("llm_query = lambda p: 'fake'\nllm_query('x')").stdout == "'fake'\n"
    assert sb.run("llm_query('x')").stdout == "'fake'\n"
    assert "llm_query" in sb.variables()
    sb.run("del service_lookup")
    assert sb.run("service_lookup('k')").stdout == "'value of k'\n"


def test_os_layers_are_reported(sb):
    info = sb.security()
    assert info["restricted_python"] is True
    assert info["rlimits"]["RLIMIT_AS"] == Limits().memory_mb * 1024 * 1024
    if os.geteuid() == 0:
        assert info["uid"] == worker_uid(sb.pid) and info["privileges_dropped"] and info["chroot"]
        assert info["network_namespace"] is True
        assert info["disk_limit_mb"] == Limits().max_disk_mb
    assert isinstance(info["seccomp"], bool)
