"""Progress reporting: long work calls ``progress(done, total)``; adapters turn that into a bar."""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

ProgressCallback = Callable[[int, int], None]
"""Called as ``progress(done, total)`` after each unit of work (e.g. a batch of passages)."""

FALLBACK_BAR_COLUMNS = 100
FALLBACK_TERMINAL_ROWS = 24


def offset_progress(
    progress: ProgressCallback | None, offset: int, total: int, *, weight: int | None = None
) -> ProgressCallback | None:
    """Report one part of a larger job as progress over the whole.

    The part calls ``progress(done, part_total)`` as usual; the whole sees ``offset + done`` of ``total``.
    With ``weight``, the part counts as ``weight`` units of the whole however many steps it reports
    (an extra pass whose own unit differs from the job's).
    """
    if progress is None:
        return None

    def report(done: int, part_total: int) -> None:
        step = done if weight is None else round(done * weight / max(part_total, 1))
        progress(offset + step, total)

    return report


class TimeLeft:
    """Estimates the time left from the work done *since the first report*.

    A resumed run starts with part of its work already in the store; counting that as speed would
    promise minutes where hours remain. The first ``update`` only sets the starting point.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._start: tuple[float, int] | None = None

    def update(self, done: int, total: int) -> float | None:
        """Seconds left at the current pace, or None until some new work has been timed."""
        now = self._clock()
        if self._start is None:
            self._start = (now, done)
            return None
        started_at, started_done = self._start
        new_work, elapsed = done - started_done, now - started_at
        if new_work <= 0 or elapsed <= 0:
            return None
        return max(total - done, 0) * elapsed / new_work


def format_duration(seconds: float | None) -> str:
    """'about 40 s' / 'about 7 min' / 'about 1 h 25 min'; empty when unknown."""
    if seconds is None or not math.isfinite(seconds):
        return ""
    if seconds < 60:
        return f"about {max(1, round(seconds))} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"about {minutes} min"
    return f"about {minutes // 60} h {minutes % 60} min"


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


TEXT_STEPS = 10
"""Plain progress lines per job: one at each tenth."""


def text_progress(
    description: str,
    stream: TextIO | None = None,
    *,
    unit: str = "text",
    steps: int = TEXT_STEPS,
    clock: Callable[[], float] = time.monotonic,
) -> ProgressCallback:
    """A callback printing one plain line at each ``1/steps`` of the job, with the time left: progress a log
    file, CI or a pipe can show (a bar redrawn in place needs a terminal). Work found done at the first
    report (a resumed run) is neither announced again nor counted as speed."""
    stream = stream if stream is not None else sys.stderr
    estimate = TimeLeft(clock)
    state = {"next": 1, "started": -1}

    def update(done: int, total: int) -> None:
        left = estimate.update(done, total)
        if state["started"] < 0:
            state["started"] = done
        todo = total - state["started"]
        if todo <= 0 or done <= state["started"]:
            return
        step = min(steps, todo)
        reached = (done - state["started"]) * step // todo
        if reached < state["next"]:
            return
        state["next"] = reached + 1
        tail = "done" if done >= total else (f"{format_duration(left)} left" if left is not None else "")
        line = f"{description}: {done} of {total} {unit}s ({done * 100 // total}%)"
        print(f"{line}, {tail}" if tail else line, file=stream, flush=True)

    return update


def announced(
    announce: Callable[[int, str], str],
    progress: ProgressCallback | None,
    stream: TextIO | None = None,
    *,
    clock: Callable[[], float] = time.monotonic,
) -> ProgressCallback:
    """``progress`` behind one plain line that says what a one-time wait is for and about how long:
    ``announce(units to do, "about 3 min")`` is printed once the first batch has timed the pace (at once, with
    no time, when the first report is also the last); nothing when everything was already done."""
    stream = stream if stream is not None else sys.stderr
    estimate = TimeLeft(clock)
    start, began, said = -1, 0.0, False

    def update(done: int, total: int) -> None:
        nonlocal start, began, said
        left = estimate.update(done, total)
        if start < 0:
            start, began = done, clock()
        todo = total - start
        if not said and todo > 0 and (left is not None or done >= total):
            print(announce(todo, format_duration(clock() - began + (left or 0))), file=stream, flush=True)
            said = True
        if progress is not None:
            progress(done, total)

    return update


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


@contextmanager
def tqdm_progress(
    description: str,
    *,
    unit: str = "text",
    disable: bool | None = None,
    stream: TextIO | None = None,
) -> Iterator[ProgressCallback]:
    """A callback driving a tqdm bar on ``stream`` (default stderr); off a terminal (``disable=None``) plain
    lines at each tenth instead (``text_progress``), so a log shows the wait is moving."""
    from tqdm import tqdm

    stream = stream if stream is not None else sys.stderr
    if disable is None and not is_terminal(stream):
        yield text_progress(description, stream, unit=unit)
        return
    bar = None

    def update(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            # Made at the first report, when the total is known. ``initial`` keeps work a resumed run found
            # already stored out of tqdm's rate and time left: it is not this process's speed.
            bar = tqdm(
                desc=description,
                unit=unit,
                file=stream,
                disable=disable,
                total=total,
                initial=done,
                **_bar_shape(stream),
            )
        if bar.total != total:
            bar.total = total
        bar.n = done
        bar.refresh()

    try:
        yield update
    finally:
        if bar is not None:
            bar.close()
