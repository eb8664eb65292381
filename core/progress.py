"""Progress reporting: long work calls ``progress(done, total)``; adapters turn that into a bar."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

ProgressCallback = Callable[[int, int], None]
"""Called as ``progress(done, total)`` after each unit of work (e.g. a batch of passages)."""

FALLBACK_BAR_COLUMNS = 100
FALLBACK_TERMINAL_ROWS = 24


def _bar_shape(stream: TextIO) -> dict[str, Any]:
    """Follow the terminal's size, or use a fixed one where the terminal reports none.

    Some pseudo-terminals (``script``, container runtimes) report 0 columns and 0 rows; tqdm would then
    draw nothing at all instead of a bar.
    """
    try:
        size = os.get_terminal_size(stream.fileno())
    except (AttributeError, OSError, ValueError):
        size = os.terminal_size((0, 0))
    shape: dict[str, Any] = {"dynamic_ncols": True} if size.columns > 0 else {"ncols": FALLBACK_BAR_COLUMNS}
    if size.lines <= 0:
        shape["nrows"] = FALLBACK_TERMINAL_ROWS
    return shape


@contextmanager
def tqdm_progress(
    description: str,
    *,
    unit: str = "text",
    disable: bool | None = None,
    stream: TextIO | None = None,
) -> Iterator[ProgressCallback]:
    """A callback driving a tqdm bar on ``stream`` (default stderr; ``disable=None`` hides it off a terminal)."""
    from tqdm import tqdm

    stream = stream if stream is not None else sys.stderr
    bar = tqdm(desc=description, unit=unit, file=stream, disable=disable, **_bar_shape(stream))

    def update(done: int, total: int) -> None:
        if bar.total != total:
            bar.total = total
        bar.n = done
        bar.refresh()

    try:
        yield update
    finally:
        bar.close()
