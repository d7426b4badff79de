"""Back the fork server's loaded memory with transparent huge pages, so each fork is cheap.

A fork copies the parent's page tables and write-protects every entry. A fork server holding
the 344-filing FinanceBench store has about 800 MB of private memory (the context string, page
texts, the index): some 200k 4 kB entries, 15-20 ms of kernel time per worker start, paid by
the one fork server for every question, one after another. In 2 MB pages the same memory is a
few hundred entries and a fork takes 2-4 ms (`benchmarks/bench_concurrency.py`). A worker that
then writes to shared memory (a reference count) still copies 4 kB, not 2 MB: since Linux 5.8 a
copy-on-write fault on a huge page splits it first, so worker private memory is unchanged.

`MADV_COLLAPSE` (Linux 6.1+) collapses memory already in use, synchronously (seconds for that
store: the fork server runs it in a thread after reporting ready). Where it is missing or THP is
off the calls fail and nothing changes: forks are only slower.
"""

import ctypes
import os

MADV_HUGEPAGE = 14
MADV_COLLAPSE = 25
HUGE_PAGE = 2 << 20
# Below this much large private memory (the demo corpus) a fork is fast anyway and the
# collapse would only slow the fork server's start.
MIN_BYTES = 128 << 20


def private_regions(maps: str) -> list[tuple[int, int]]:
    """(start, length) of the anonymous or heap read-write mappings of at least one huge page
    in a /proc/PID/maps text."""
    regions = []
    for line in maps.splitlines():
        parts = line.split()
        if len(parts) < 5 or not parts[1].startswith("rw"):
            continue
        if len(parts) > 5 and parts[5] != "[heap]":
            continue  # file-backed, stack, vdso: not ours to fold
        start, end = (int(x, 16) for x in parts[0].split("-"))
        if end - start >= HUGE_PAGE:
            regions.append((start, end - start))
    return regions


def collapse_private_memory() -> int:
    """Ask the kernel to back this process's large private mappings with huge pages; returns
    the bytes of the regions it was asked about (0: too little to matter, or no /proc)."""
    try:
        with open(f"/proc/{os.getpid()}/maps", encoding="ascii") as fh:
            regions = private_regions(fh.read())
    except OSError:
        return 0
    total = sum(length for _, length in regions)
    if total < MIN_BYTES:
        return 0
    madvise = ctypes.CDLL(None, use_errno=True).madvise
    madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    for start, length in regions:
        madvise(start, length, MADV_HUGEPAGE)  # also lets the region grow in huge pages
        madvise(start, length, MADV_COLLAPSE)  # fails per region where it cannot: fine
    return total
