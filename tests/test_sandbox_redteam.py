"""Regression tests for the red-team report: each proof of concept, as close to the original
as the fixed sandbox allows. Python-layer escapes run as plain model code; protocol attacks
play a compromised worker by writing forged frames into the worker -> host pipe (opened through
/proc/self/fd, exactly the bytes an escaped worker could write)."""

import dataclasses
import fcntl
import json
import os
import struct
import threading
import time
import types

import pytest

from rlm_docs.repl import CorpusSandbox
from sandbox import Limits, Sandbox, policy, protocol
from sandbox.confine import process_cpu_s, worker_uid
from sandbox.host import IDLE_CPU_S
from sandbox.modules import load_modules
from sandbox.worker import Channel, Worker

UNRESTRICTED = "import os; raise Exception(repr(os.getuid()))"

ESCAPES = [
    # A1: update_wrapper / wraps copy the real functools globals (and builtins) into the cell
    (
        "update_wrapper",
        "import functools\ndef h(): pass\nfunctools.update_wrapper(h, functools.update_wrapper, "
        "assigned=(), updated=('__globals__',))",
        "has no attribute 'update_wrapper'",
    ),
    (
        "wraps",
        "import functools\ndef h(): pass\nfunctools.wraps(functools.wraps, assigned=(), "
        "updated=('__globals__',))(h)",
        "has no attribute 'wraps'",
    ),
    ("partialmethod", "import functools\nfunctools.partialmethod", "no attribute 'partialmethod'"),
    # A2: singledispatch evaluates string annotations with the real builtins
    (
        "singledispatchmethod",
        "import functools\ndef f(x):\n    return 0\n"
        "def g(x: \"[B := functools.update_wrapper.__globals__['__builtins__'], "
        f"B['exec']({UNRESTRICTED!r}, {{'__builtins__': B}})]\"):\n    return 1\n"
        "functools.singledispatchmethod(f).register(g)",
        "has no attribute 'singledispatchmethod'",
    ),
    ("singledispatch", "import functools\nfunctools.singledispatch", "no attribute 'singledisp"),
    ("total_ordering", "import functools\nfunctools.total_ordering", "no attribute 'total_order"),
    # A3: a str subclass defeats startswith / == checks on attribute names
    (
        "str_subclass_getattr",
        "import collections\nclass S(str):\n    def startswith(self, *a):\n        return False\n"
        "subs = getattr(object, S('__subclasses__'))()\n"
        "ag = [c for c in subs if getattr(c, S('__name__')) == 'attrgetter'][0]\n"
        "b = ag('__globals__')(collections.namedtuple).get('__builtins__')\n"
        f"b.get('exec')({UNRESTRICTED!r}, {{'__builtins__': b}})",
        "TypeError: attribute name must be a string",
    ),
    (
        "str_subclass_hasattr",
        "class S(str):\n    def startswith(self, *a):\n        return False\n"
        "hasattr((), S('__class__'))",
        "TypeError: attribute name must be a string",
    ),
    (
        "str_subclass_setattr",
        "class S(str):\n    def startswith(self, *a):\n        return False\n"
        "class A:\n    pass\nsetattr(A(), S('__class__'), int)",
        "TypeError: attribute name must be a string",
    ),
    (
        "str_subclass_eq_format",
        "class S(str):\n    def __eq__(self, other):\n        return True\n"
        "getattr('{0.__class__}', S('format'))(1)",
        "TypeError: attribute name must be a string",
    ),
    # A str subclass's class handed out the raw, unguarded str.format / str.format_map
    (
        "str_subclass_class_format",
        "class S(str):\n    pass\ndef f():\n    pass\nS.format('{0.__globals__}', f)",
        "is not allowed in the sandbox",
    ),
    (
        "str_subclass_class_format_map",
        "class S(str):\n    pass\nclass T(S):\n    pass\ndef f():\n    pass\n"
        "getattr(T, 'format_map')('{x.__globals__}', {'x': f})",
        "is not allowed in the sandbox",
    ),
    (
        "str_subclass_instance_type_format",
        "class S(str):\n    pass\ndef f():\n    pass\ntype(S('a')).format('{0.__code__}', f)",
        "is not allowed in the sandbox",
    ),
    # A4: `from PKG import SUB` fell back to the real sys.modules entry
    ("from_json_import_decoder", "from json import decoder\ndecoder", "cannot import name"),
    ("from_collections_import_abc", "from collections import abc\nabc", "cannot import name"),
    ("from_re_import_sre", "from re import _compiler", "refused by the sandbox"),
    # namedtuple builds its __new__ with eval: field names must not inject code
    (
        "namedtuple_str_subclass_fields",
        "import collections\nclass S(str):\n    def isidentifier(self):\n        return True\n"
        "collections.namedtuple('P', [S('a), exec(\"1\"), (b')])",
        "Type names and field names must be valid identifiers",
    ),
]


@pytest.fixture(scope="module")
def sb():
    with Sandbox(limits=Limits(wall_s=10), functions={"echo": lambda x: x}) as box:
        yield box


@pytest.mark.parametrize(
    ("code", "fragment"), [e[1:] for e in ESCAPES], ids=[e[0] for e in ESCAPES]
)
def test_python_layer_escape_is_blocked(sb, code, fragment):
    pid = sb.pid
    result = sb.run(code)
    assert result.error is not None and fragment in result.error, result.error
    # what the escape was for: unrestricted exec in this or a later cell
    follow_up = sb.run(f"from builtins import exec as ex\nx = ex({UNRESTRICTED!r}, {{}})")
    assert "module 'builtins' is not available" in follow_up.error
    assert not result.restarted and sb.pid == pid
    assert sb.run("1 + 1").stdout == "2\n"


def test_allowed_modules_hold_only_listed_names():
    modules = load_modules()
    for name, wrapper in modules.items():
        if name.startswith("_"):
            continue
        for attr, value in vars(wrapper).items():
            assert not isinstance(value, types.ModuleType), f"{name}.{attr}"
        assert " " in wrapper.__name__  # never a key of sys.modules
    dangerous = {"update_wrapper", "wraps", "partialmethod", "singledispatch", "cached_property"}
    assert dangerous.isdisjoint(vars(modules["functools"]))
    assert {"reduce", "partial", "lru_cache"} <= set(vars(modules["functools"]))


def test_dict_methods_never_hand_out_modules():
    leaked = {"os": os, "n": 1}
    for name, call in [
        ("get", lambda f: f("os")),
        ("pop", lambda f: f("os")),
        ("setdefault", lambda f: f("os")),
        ("values", lambda f: list(f())),
        ("items", lambda f: list(f())),
    ]:
        with pytest.raises(AttributeError, match="not available in the sandbox"):
            call(policy.guarded_getattr(dict(leaked), name))
    with pytest.raises(AttributeError, match="not available in the sandbox"):
        policy.guarded_getattr(dict, "get")(leaked, "os")
    with pytest.raises(AttributeError, match="not available in the sandbox"):
        policy.guarded_getattr({"os": os}, "popitem")()
    assert policy.guarded_getattr(leaked, "get")("n") == 1
    with pytest.raises(TypeError, match="not available in the sandbox"):
        policy.guarded_type(os)


def test_builtins_are_reset_before_every_cell():
    """Even if a cell swapped the namespace's __builtins__ (what A1 did), the next one runs
    with the sandbox's table again."""
    r, w = os.pipe()
    try:
        request = {"limits": {"max_output_chars": 1000, "cpu_s": 10}, "functions": []}
        worker = Worker(Channel(r, w), request, {"modules": load_modules(), "corpus": {}})
        worker.namespace["__builtins__"] = __builtins__
        reply = worker.run("open")
        assert "NameError: name 'open' is not defined" in reply["error"]
    finally:
        os.close(r)
        os.close(w)


# -- protocol attacks (D) ---------------------------------------------------------------------


def forge(box: CorpusSandbox, message: dict, after_s: float = 0.0, current_id: bool = True) -> None:
    """Write a frame into the worker -> host pipe as an escaped worker could, optionally with
    the id of the request in flight (which such a worker can read from its own memory)."""

    def write() -> None:
        time.sleep(after_s)
        frame = {**message, "id": box._request_id} if current_id else message
        fd = os.open(f"/proc/self/fd/{box._reader.fd}", os.O_WRONLY)
        try:
            data = json.dumps(frame).encode()
            os.write(fd, struct.pack(">I", len(data)) + data)
        finally:
            os.close(fd)

    if after_s:
        threading.Thread(target=write, daemon=True).start()
    else:
        write()


def test_forged_frame_with_another_id_restarts_the_worker():
    with Sandbox(limits=Limits(wall_s=10)) as box:
        box.run("kept = 1")
        forge(box, {"op": "done", "stdout": "looks fine\n", "error": None, "id": 999}, 0.3, False)
        result = box.run("import time\ntime.sleep(3)")
        assert result.restarted and "unexpected 'done' frame" in result.error
        assert "NameError" in box.run("kept").error


def test_frames_sent_between_requests_restart_the_worker():
    with Sandbox(limits=Limits(wall_s=10)) as box:
        forge(box, {"op": "done", "stdout": "stale\n", "error": None})
        result = box.run("print(1)")
        assert result.restarted and "sent data between requests" in result.error
        assert box.run("print(2)").stdout == "2\n"


def test_forged_huge_output_is_cut_by_the_host():
    """D2/E2: a worker's own output limit is not trusted; the host applies it again."""
    limits = Limits(wall_s=10, max_output_chars=2000)
    with Sandbox(limits=limits) as box:
        huge = {"op": "done", "stdout": "A" * 1_000_000, "error": "E" * 1_000_000}
        forge(box, huge, after_s=0.3)
        result = box.run("import time\ntime.sleep(1)")
        assert not result.restarted
        assert len(result.stdout) < 2100 and "characters truncated" in result.stdout
        assert len(result.error) < 2100 and "characters truncated" in result.error
        time.sleep(1)  # the real reply to that cell now waits in the pipe: not accepted later
        assert box.run("print(1)").restarted


def test_worker_that_stops_reading_cannot_block_the_host():
    """D1: forged early `done`, request pipe shrunk to 4 KB, worker busy: a 20 KB cell must
    time out after wall_s instead of blocking in write forever."""
    with Sandbox(limits=Limits(wall_s=2)) as box:
        forge(box, {"op": "done", "stdout": "", "error": None}, after_s=0.3)
        assert not box.run("import time\ntime.sleep(60)").restarted
        fcntl.fcntl(box._write_fd, 1031, 4096)  # F_SETPIPE_SZ
        outcome: list = []
        runner = threading.Thread(
            target=lambda: outcome.append(box.run("x = 1\n" + "# padding\n" * 2000)), daemon=True
        )
        started = time.monotonic()
        runner.start()
        runner.join(30)
        assert outcome, "the host is still blocked writing to the worker"
        assert time.monotonic() - started < 10
        assert outcome[0].restarted and outcome[0].error.startswith("TimeoutError")
        assert box.run("print(3)").stdout == "3\n"


def test_cpu_used_between_requests_restarts_the_worker():
    """C3: a cell that keeps running after a forged `done` burns CPU between requests."""
    with Sandbox(limits=Limits(wall_s=10, cpu_s=30)) as box:
        forge(box, {"op": "done", "stdout": "", "error": None}, after_s=0.3)
        assert not box.run("import time\ntime.sleep(0.6)\nwhile True:\n    pass").restarted
        # Wait until the worker has really burnt more than the host tolerates, however loaded
        # the machine is (a fixed sleep gave it too little CPU on a busy 2-core host).
        start, deadline = process_cpu_s(box.pid), time.monotonic() + 50
        while process_cpu_s(box.pid) - start < IDLE_CPU_S + 0.5 and time.monotonic() < deadline:
            time.sleep(0.2)
        result = box.run("print(1)")
        assert result.restarted and "of CPU between requests" in result.error


def test_host_stops_a_worker_that_lifted_its_cpu_limit():
    """C3: the worker's RLIMIT_CPU is its own to move; the host counts its CPU time as well.
    Here the worker was started with 30 s and the host expects 1 s, as if it had lifted it."""
    with Sandbox(limits=Limits(wall_s=30, cpu_s=30)) as box:
        box.limits = dataclasses.replace(box.limits, cpu_s=1)
        started = time.monotonic()
        result = box.run("while True:\n    pass")
        assert result.restarted and "exceeded its CPU time limit of 1 s" in result.error
        assert time.monotonic() - started < 10


# -- robustness reachable from plain code (E) ------------------------------------------------


def _at_depth(n: int, fn):
    return fn() if n == 0 else _at_depth(n - 1, fn)


def test_deeply_nested_arguments_are_refused_in_the_worker(sb):
    code = "x = []\nfor i in range(960):\n    x = [x]\necho(x)"
    result = _at_depth(150, lambda: sb.run(code))  # a host stack that is already deep
    assert not result.restarted and "nested more than 100 levels" in result.error
    assert sb.run("echo([[[1]]])").stdout == "[[[1]]]\n"


def test_deeply_nested_frame_is_a_protocol_error():
    r, w = os.pipe()
    try:
        body = b"[" * 200_000 + b"]" * 200_000
        threading.Thread(
            target=lambda: os.write(w, struct.pack(">I", len(body)) + body), daemon=True
        ).start()
        with pytest.raises(protocol.ProtocolError, match="nested too deeply"):
            protocol.FrameReader(r).read(time.monotonic() + 5)
    finally:
        os.close(r)
        os.close(w)


def test_huge_error_message_is_bounded():
    with Sandbox(limits=Limits(wall_s=10, max_output_chars=5000)) as box:
        result = box.run("raise Exception('E' * 5_000_000)")
        assert not result.restarted
        assert len(result.error) < 5100 and "characters truncated" in result.error
        assert "\nException: EEE" in result.error


# -- OS layer seen from the sandbox (C) ------------------------------------------------------


@pytest.mark.skipif(os.geteuid() != 0, reason="per-worker uids and namespaces need root")
def test_workers_have_distinct_uids_and_no_network():
    with Sandbox(limits=Limits(wall_s=5)) as a, Sandbox(limits=Limits(wall_s=5)) as b:
        assert a.security()["uid"] == worker_uid(a.pid) != b.security()["uid"]
        for box in (a, b):
            info = box.security()
            assert info["network_namespace"] and info["disk_limit_mb"] == Limits().max_disk_mb
            assert os.listdir(box._workdir) == []
