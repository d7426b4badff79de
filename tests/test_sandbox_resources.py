"""Resource bombs: each is contained (error or worker restart) and the session stays usable."""

import time

import pytest

from sandbox import Limits, Sandbox

LIMITS = Limits(wall_s=1.5, cpu_s=30, memory_mb=1024, max_output_chars=2000)


@pytest.fixture(scope="module")
def sb():
    functions = {"slow_echo": lambda x, delay=0.0: time.sleep(delay) or x}
    with Sandbox(limits=LIMITS, functions=functions) as box:
        yield box


@pytest.fixture(scope="module")
def mem_sb():
    """Touching a gigabyte is slow on small VMs: a generous wall clock, a small address space."""
    with Sandbox(limits=Limits(wall_s=30, memory_mb=768)) as box:
        yield box


def usable(box: Sandbox) -> bool:
    return box.run("probe = 40 + 2\nprobe").stdout == "42\n"


@pytest.mark.parametrize(
    "code",
    [
        "x = 'a' * (10 ** 10)",
        "x = [0] * (10 ** 10)",
        "chunks = []\nwhile True:\n    chunks.append(bytearray(50 * 2 ** 20))",
    ],
    ids=["one_huge_string", "one_huge_list", "growing"],
)
def test_memory_bomb_is_contained(mem_sb, code):
    result = mem_sb.run(code)
    assert result.error is not None
    assert "MemoryError" in result.error or (result.restarted and "memory" in result.error)
    assert usable(mem_sb)


def test_cpu_loop_hits_wall_clock_and_restarts(sb):
    sb.run("kept = 1")
    started = time.monotonic()
    result = sb.run("while True:\n    pass")
    assert time.monotonic() - started < LIMITS.wall_s + 5
    assert result.restarted
    assert result.error.startswith("TimeoutError: cell exceeded 1.5 s wall clock")
    assert "variables were lost" in result.error
    assert "NameError" in sb.run("kept").error
    assert usable(sb)


def test_catching_base_exception_does_not_survive_the_timeout(sb):
    code = "while True:\n    try:\n        while True:\n            pass\n    except BaseException:\n        pass"
    result = sb.run(code)
    assert result.restarted and "TimeoutError" in result.error
    assert usable(sb)


def test_catastrophic_regex_is_stopped(sb):
    result = sb.run("import re\nre.match(r'(a+)+$', 'a' * 64 + 'b')")
    assert result.restarted and "TimeoutError" in result.error
    assert usable(sb)


def test_sleep_is_bounded_by_the_wall_clock(sb):
    result = sb.run("import time\ntime.sleep(60)")
    assert result.restarted and "TimeoutError" in result.error
    assert usable(sb)


def test_time_in_host_functions_is_not_counted(sb):
    result = sb.run("[slow_echo(i, delay=0.25) for i in range(8)]")  # 2 s in the host
    assert result.error is None and not result.restarted
    assert result.stdout == "[0, 1, 2, 3, 4, 5, 6, 7]\n"
    assert result.duration_s >= 2.0


def test_cpu_limit_kills_the_worker():
    with Sandbox(limits=Limits(wall_s=30, cpu_s=1, memory_mb=1024)) as box:
        box.run("kept = 1")
        result = box.run("while True:\n    pass")
        assert result.restarted
        assert "CPU time limit of 1 s" in result.error
        assert "NameError" in box.run("kept").error
        assert box.run("sum(range(10))").stdout == "45\n"


def test_deep_recursion_gives_a_short_traceback(sb):
    result = sb.run("def f(n):\n    return f(n + 1)\nf(0)")
    assert not result.restarted
    assert result.error.startswith("Traceback (cell line 3):")
    assert result.error.endswith("RecursionError: maximum recursion depth exceeded")
    assert "more frames" in result.error and len(result.error.splitlines()) <= 10
    assert usable(sb)


def test_huge_print_is_truncated_head_and_tail(sb):
    result = sb.run("print('<' + 'x' * 10 ** 7 + '>')")
    assert result.error is None
    assert len(result.stdout) < LIMITS.max_output_chars + 100
    assert result.stdout.startswith("<xxx") and result.stdout.endswith("xx>\n")
    cut = 10**7 + 3 - LIMITS.max_output_chars
    assert f"[... {cut:,} characters truncated: lines 1-1 of 2 not shown ...]" in result.stdout


def test_many_prints_keep_first_and_last_lines(sb):
    result = sb.run("for i in range(200000):\n    print(i)")
    assert result.stdout.startswith("0\n1\n2\n")
    assert result.stdout.endswith("199998\n199999\n")
    assert "characters truncated" in result.stdout


def test_huge_last_expression_is_truncated(sb):
    result = sb.run("'y' * 10 ** 8")
    assert len(result.stdout) < LIMITS.max_output_chars + 100
    assert "characters truncated" in result.stdout


def test_files_and_fds_are_out_of_reach(sb):
    for code in ("open('big.bin', 'wb')", "[open('/dev/null') for _ in range(10000)]"):
        assert "name 'open' is not defined" in sb.run(code).error
    rlimits = sb.security()["rlimits"]
    assert rlimits["RLIMIT_NOFILE"] == LIMITS.max_open_files
    assert rlimits["RLIMIT_FSIZE"] == LIMITS.max_file_mb * 2**20
    assert usable(sb)
