"""The fork server folds its loaded memory into huge pages (`sandbox.huge_pages`)."""

import subprocess
import sys
from pathlib import Path

import pytest

from sandbox.huge_pages import HUGE_PAGE, private_regions

MAPS = """\
55d0c0000000-55d0c0001000 r--p 00000000 08:01 123  /usr/bin/python3.11
55d0c1000000-55d0c5000000 rw-p 00000000 00:00 0    [heap]
7f0000000000-7f0010000000 rw-p 00000000 00:00 0
7f0010000000-7f0010100000 rw-p 00000000 00:00 0
7f0020000000-7f0030000000 rw-p 00000000 08:01 77   /tmp/store/pages.parquet
7f0030000000-7f0040000000 r--p 00000000 00:00 0
7ffd00000000-7ffd00400000 rw-p 00000000 00:00 0    [stack]
"""


def test_only_large_private_writable_mappings_are_folded():
    assert private_regions(MAPS) == [
        (0x55D0C1000000, 0x4000000),  # the heap
        (0x7F0000000000, 0x10000000),  # 256 MB anonymous
    ]  # not the 1 MB one, the file mapping, the read-only one or the stack
    assert all(length >= HUGE_PAGE for _, length in private_regions(MAPS))


def test_small_processes_are_left_alone():
    code = "from sandbox.huge_pages import collapse_private_memory as c; print(c())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0"  # a fresh interpreter holds far less than 128 MB


THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")


@pytest.mark.skipif(
    not THP.exists() or "[never]" in THP.read_text(), reason="no transparent huge pages"
)
def test_a_large_heap_ends_up_in_huge_pages():
    code = (
        "from sandbox.huge_pages import collapse_private_memory\n"
        "data = bytearray(b'x' * (512 << 20))\n"
        "def huge():\n"
        "    rollup = open('/proc/self/smaps_rollup').read().split('AnonHugePages:')[1]\n"
        "    return int(rollup.split()[0]) >> 10\n"
        "before = huge()\n"
        "asked = collapse_private_memory() >> 20\n"
        "print(before, asked, huge())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, asked, after = (int(x) for x in out.stdout.split())
    assert asked >= 512
    assert after >= 256 and after > before  # MB in huge pages
