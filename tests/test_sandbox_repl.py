"""REPL semantics: persistence, errors, display, host RPC, get/set/variables, restarts."""

import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from rlm_docs.errors import CorpusError
from rlm_docs.repl import CorpusSandbox
from sandbox import ConfigError, Limits, Sandbox, SandboxError, fork_server_pool
from sandbox.confine import worker_uid


class BudgetExceeded(Exception):
    """Stands in for the governor's exception: only the class name crosses the boundary."""


class QuotaError(Exception):
    pass


def refuse(prompt: str) -> str:
    raise BudgetExceeded(f"sub-call budget exhausted before {prompt!r}")


def quota() -> None:
    raise QuotaError("quota reached")


def bad_value() -> object:
    return {1, 2}


CALLS: list[tuple] = []


def record(*args, **kwargs):
    CALLS.append((args, kwargs))
    return {"n": len(CALLS), "args": list(args), "kwargs": kwargs}


@pytest.fixture(scope="module")
def sb():
    functions = {
        "refuse": refuse,
        "quota": quota,
        "bad_value": bad_value,
        "record": record,
        "fail_value": lambda: int("x"),
    }
    with Sandbox(limits=Limits(wall_s=10, max_output_chars=5000), functions=functions) as box:
        yield box


def test_variables_and_functions_persist_across_cells(sb):
    assert sb.run("total = 0\ndef add(n):\n    return total + n").error is None
    assert sb.run("total = add(5)").stdout == ""
    assert sb.run("total").stdout == "5\n"
    assert sb.get("total") == 5


def test_error_keeps_namespace_and_points_at_the_model_line(sb):
    result = sb.run("a = 1\nb = a + 1\nc = b / 0\nd = 4")
    assert result.error == (
        "Traceback (cell line 3):\n  line 3: c = b / 0\nZeroDivisionError: division by zero"
    )
    assert "sandbox/" not in result.error and "worker" not in result.error
    assert sb.get("b") == 2
    with pytest.raises(KeyError):
        sb.get("d")


def test_traceback_through_a_function_from_an_earlier_cell(sb):
    sb.run("def divide(x):\n    return 10 / x")
    error = sb.run("y = 1\ndivide(0)").error
    lines = error.splitlines()
    assert lines[0] == "Traceback (cell line 2):"
    assert lines[1] == "  line 2: divide(0)"
    assert lines[2].startswith("  line 2 of cell ") and lines[2].endswith(
        ", in divide: return 10 / x"
    )
    assert lines[-1] == "ZeroDivisionError: division by zero"


def test_syntax_error_shows_the_line(sb):
    error = sb.run("x = 1\ny = = 2").error
    assert error.startswith("SyntaxError: invalid syntax (cell line 2)")
    assert "y = = 2" in error and "^" in error


def test_last_expression_is_displayed_like_a_notebook(sb):
    assert sb.run("print('first')\n[1, 2][0] + 1").stdout == "first\n2\n"
    assert sb.run("None").stdout == ""
    assert sb.run("z = 3").stdout == ""
    assert sb.run("for i in range(2):\n    i").stdout == ""
    assert sb.run("'text'").stdout == "'text'\n"


def test_print_inside_functions_and_printed_is_captured(sb):
    assert sb.run("def shout(x):\n    print(x.upper())\nshout('hi')").stdout == "HI\n"
    assert sb.run("print('a', 'b', sep='-', end='!')").stdout == "a-b!"


def test_host_function_exception_keeps_its_class_name(sb):
    error = sb.run("refuse('q1')").error
    assert error.endswith("BudgetExceeded: sub-call budget exhausted before 'q1'")
    caught = sb.run("try:\n    refuse('q2')\nexcept BudgetExceeded as e:\n    print('caught:', e)")
    assert caught.error is None
    assert caught.stdout == "caught: sub-call budget exhausted before 'q2'\n"
    assert sb.run("quota()").error.endswith("QuotaError: quota reached")
    assert sb.run("try:\n    quota()\nexcept QuotaError:\n    print('ok')").stdout == "ok\n"
    assert sb.run("try:\n    fail_value()\nexcept ValueError:\n    print('builtin')").stdout == (
        "builtin\n"
    )


def test_many_rpcs_per_cell_with_kwargs(sb):
    CALLS.clear()
    result = sb.run("out = [record(i, tag='t') for i in range(200)]\nout[-1]")
    assert result.error is None
    assert len(CALLS) == 200 and CALLS[-1] == ((199,), {"tag": "t"})
    assert result.stdout == "{'n': 200, 'args': [199], 'kwargs': {'tag': 't'}}\n"


def test_rpc_values_must_be_json(sb):
    error = sb.run("record({1, 2})").error
    assert "TypeError: record() arguments must be JSON-able" in error
    assert "returned a value that is not JSON-able" in sb.run("bad_value()").error
    assert sb.run("1 + 1").stdout == "2\n"


def test_get_set_and_variables(sb):
    sb.set("answer", {"content": "", "ready": False})
    assert sb.run("answer['content'] = 'Paris'\nanswer['ready'] = True").error is None
    assert sb.get("answer") == {"content": "Paris", "ready": True}
    sb.run("pairs = {(1, 2): {3}}\ntext = 'x' * 1234\nclass Box:\n    pass\nbox = Box()")
    assert sb.get("pairs") == {"(1, 2)": [3]}
    assert sb.get("box").startswith("<sandbox.Box object")
    desc = sb.variables()
    assert desc["text"] == "str, 1,234 chars"
    assert desc["answer"] == "dict, 2 keys"
    assert desc["Box"] == "class" and desc["box"] == "Box"
    assert "refuse" not in desc and "BudgetExceeded" not in desc
    assert not any(name.startswith("_") for name in desc)
    with pytest.raises(KeyError):
        sb.get("nope")
    with pytest.raises(TypeError, match="JSON-able"):
        sb.set("x", object())
    with pytest.raises(ValueError, match="invalid variable name"):
        sb.set("_hidden", 1)


def test_set_replaces_a_scaffold_name_for_good(sb):
    sb.set("refuse", "shadowed")
    sb.run("x = 1")
    assert sb.get("refuse") == "shadowed"


def test_explicit_restart_loses_variables():
    with Sandbox(limits=Limits(wall_s=5)) as box:
        box.run("v = 1")
        pid = box.pid
        box.restart()
        assert box.pid != pid
        assert "NameError: name 'v' is not defined" in box.run("v").error


def test_close_removes_the_worker_and_its_directory():
    box = Sandbox(limits=Limits(wall_s=5))
    workdir = Path(box._workdir)
    pid = box.pid
    assert workdir.is_dir()
    box.close()
    box.close()
    assert not workdir.exists()
    # killed at once; the fork server reaps it once it has exited, without holding up close()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
        time.sleep(0.01)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


@pytest.mark.skipif(os.geteuid() != 0, reason="reading another user's /proc entry needs root")
def test_worker_runs_as_its_own_uid_without_host_secrets(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-for-the-sandbox")
    with Sandbox(limits=Limits(wall_s=5)) as box:
        environ = Path(f"/proc/{box.pid}/environ").read_bytes().decode()
        status = Path(f"/proc/{box.pid}/status").read_text()
        uid = worker_uid(box.pid)
    assert "sk-test-not-for-the-sandbox" not in environ and "API_KEY" not in environ
    assert f"\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\n" in status


def test_bad_arguments_are_clear_errors(tmp_path):
    with pytest.raises(ConfigError, match="Limits.wall_s"):
        Limits(wall_s=0)
    with pytest.raises(CorpusError, match="corpus store directory not found"):
        CorpusSandbox(corpus=tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(CorpusError, match="empty"):
        CorpusSandbox(corpus=tmp_path / "empty")
    with pytest.raises(ValueError, match="must not start with '_'"):
        Sandbox(functions={"_x": len})


def test_host_interrupt_restarts_the_worker():
    def interrupt() -> None:
        raise KeyboardInterrupt

    with Sandbox(limits=Limits(wall_s=5), functions={"interrupt": interrupt}) as box:
        box.run("v = 1")
        with pytest.raises(KeyboardInterrupt):
            box.run("interrupt()")
        assert "NameError" in box.run("v").error
        assert box.run("2 * 21").stdout == "42\n"


def test_odd_code_and_output_are_reported_not_fatal(sb):
    assert sb.run("1+" * 100000 + "1").error.startswith("RecursionError")
    assert "null bytes" in sb.run("x = 'a\x00b'").error
    assert sb.run("print('\\ud800')").stdout == "\ud800\n"
    nested = sb.run("a = []\nfor i in range(100000):\n    a = [a]\na").error
    assert nested.endswith(
        "RecursionError: maximum recursion depth exceeded while getting the repr of an object"
    )
    assert sb.run("1 + 1").stdout == "2\n"


def test_closed_sandbox_refuses_work():
    box = Sandbox(limits=Limits(wall_s=5))
    box.close()
    with pytest.raises(SandboxError, match="closed"):
        box.run("1")


def test_memory_limit_below_the_worker_size_is_a_clear_error():
    with pytest.raises(SandboxError, match="Limits.memory_mb=64 is too small"):
        Sandbox(limits=Limits(memory_mb=64))


def test_forked_host_neither_shares_nor_stops_the_parents_worker():
    with Sandbox(limits=Limits(wall_s=10)) as box:
        box.run("kept = 7")
        pid = os.fork()
        if pid == 0:  # child: its own sandbox works; closing the inherited one is harmless
            code = 1
            try:
                with Sandbox(limits=Limits(wall_s=10)) as mine:
                    code = 0 if mine.run("6 * 7").stdout == "42\n" else 2
                box.close()
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert box.run("kept").stdout == "7\n"


def test_get_of_an_uncopyable_value_is_an_error_not_a_crash(sb):
    sb.run("deep = []\nfor i in range(200):\n    deep = [deep]")
    pid = sb.pid
    with pytest.raises(ValueError, match="nested too deeply"):
        sb.get("deep")
    assert sb.pid == pid and sb.get("total") == 5


def test_concurrent_sandboxes_share_one_fork_server_and_each_gets_its_worker():
    """Spawn and reap requests from many threads are pipelined on the fork server's one
    socket: every thread gets its own reply (its own worker), none is lost or swapped."""

    def one(i: int) -> tuple[int, str]:
        with Sandbox(limits=Limits(wall_s=30)) as box:
            return box.pid, box.run(f"x = {i} * 2\nprint(x)").stdout

    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(one, range(32)))
    assert [out for _, out in results] == [f"{i * 2}\n" for i in range(32)]
    assert len({pid for pid, _ in results}) == 32


def test_a_fork_server_that_dies_fails_waiting_and_later_requests():
    server = fork_server_pool.acquire(None, 30)
    try:
        server._proc.kill()
        server._proc.wait()
        for _ in range(2):  # the one that finds it dead, and one after
            with pytest.raises(OSError):
                server.spawn({}, [])
    finally:
        fork_server_pool.release(server)
    with Sandbox(limits=Limits(wall_s=30)) as box:  # the pool starts a fresh fork server
        assert box.run("print(1)").stdout == "1\n"
