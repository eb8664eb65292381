"""Keep freed memory for reuse instead of handing it back to the system (glibc only).

Batched inference on a CPU allocates and frees tensors of tens of megabytes at every pass and decoding
batch. By default glibc returns such blocks to the system as soon as they are freed, and the next batch
pays again for the kernel to map and zero fresh pages. Keeping them makes a process's memory stay near
its peak (as PyTorch's GPU allocator does). The gain is small, and at the level of a whole command
within a shared machine's noise (docs/benchmarks.md, MCQ probe speed). ``LEAKLENS_KEEP_FREED_MEMORY=0``
leaves the allocator as it is.
"""

from __future__ import annotations

import ctypes
import logging
import os
import sys

log = logging.getLogger(__name__)

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
"""glibc's ``mallopt`` parameters (malloc.h)."""
MMAP_THRESHOLD = 32 << 20
"""Blocks up to 32 MiB (glibc's most) come from the reusable heap rather than fresh mappings."""
TRIM_THRESHOLD = 2**31 - 1
"""Free memory kept at the heap's top before any is returned (the most a C int holds, 2 GiB)."""

_applied: bool | None = None


def keep_freed_memory() -> bool:
    """Tune glibc's allocator once per process; whether it is tuned (False off glibc, or when turned off)."""
    global _applied
    if _applied is None:
        _applied = _tune()
    return _applied


def _tune() -> bool:
    if os.environ.get("LEAKLENS_KEEP_FREED_MEMORY", "1") == "0" or not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):  # another C library (musl): nothing to tune
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    tuned = bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    if not tuned:
        log.debug("glibc refused the allocator settings; memory is handed back as freed")
    return tuned
