"""Progress reporting: long work calls ``progress(done, total)``; adapters turn that into a bar."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

ProgressCallback = Callable[[int, int], None]
"""Called as ``progress(done, total)`` after each unit of work (e.g. a batch of passages)."""


@contextmanager
def tqdm_progress(description: str, *, unit: str = "text", disable: bool | None = None) -> Iterator[ProgressCallback]:
    """A callback driving a tqdm bar on stderr (``disable=None`` hides it when stderr is not a terminal)."""
    from tqdm import tqdm

    bar = tqdm(desc=description, unit=unit, file=sys.stderr, disable=disable, dynamic_ncols=True)

    def update(done: int, total: int) -> None:
        if bar.total != total:
            bar.total = total
        bar.n = done
        bar.refresh()

    try:
        yield update
    finally:
        bar.close()
