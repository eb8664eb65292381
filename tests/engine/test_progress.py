"""The CLI progress bar: it draws counts and a bar even where the terminal reports no width."""

from __future__ import annotations

import io

from core.engine.progress import (
    FALLBACK_BAR_COLUMNS,
    FALLBACK_TERMINAL_ROWS,
    TimeLeft,
    _bar_shape,
    format_duration,
    tqdm_progress,
)


def test_bar_shows_counts_and_percentages():
    stream = io.StringIO()
    with tqdm_progress("scoring", disable=False, stream=stream) as progress:
        progress(16, 48)
        progress(48, 48)
    frames = [f for f in stream.getvalue().split("\r") if f.strip()]
    assert any("scoring:  33%" in f and "16/48" in f for f in frames)
    assert "scoring: 100%" in frames[-1]
    assert "48/48" in frames[-1]
    assert "|" + "#" * 10 in frames[-1]  # the bar itself (ASCII on a stream that is not a terminal)


def test_stream_without_terminal_size_gets_fixed_shape():
    assert _bar_shape(io.StringIO()) == {"ncols": FALLBACK_BAR_COLUMNS, "nrows": FALLBACK_TERMINAL_ROWS}


def test_disabled_bar_writes_nothing():
    stream = io.StringIO()
    with tqdm_progress("scoring", disable=True, stream=stream) as progress:
        progress(1, 2)
    assert stream.getvalue() == ""


def test_resumed_work_is_not_counted_as_speed():
    """A run resuming at 200/250 must not report the 200 stored texts as this process's speed."""
    import re
    import time

    stream = io.StringIO()
    with tqdm_progress("scoring", disable=False, stream=stream) as progress:
        time.sleep(0.3)  # e.g. loading the model
        progress(200, 250)
        time.sleep(0.3)
        progress(201, 250)
    last = [f for f in stream.getvalue().split("\r") if f.strip()][-1]
    assert "201/250" in last
    # 1 text in 0.3 s leaves 49 texts ≈ 15 s; counting the 200 stored ones would claim 0 s left.
    minutes, seconds = map(int, re.search(r"<(\d+):(\d+)", last).groups())
    assert 60 * minutes + seconds >= 8


def test_time_left_counts_only_new_work():
    clock = iter([0.0, 10.0, 20.0]).__next__
    left = TimeLeft(clock=clock)
    assert left.update(200, 250) is None  # starting point: 200 were already stored
    assert left.update(210, 250) == 40 * 10.0 / 10  # 10 new texts in 10 s, 40 to go
    assert left.update(220, 250) == 30 * 20.0 / 20


def test_time_left_unknown_without_new_work():
    clock = iter([0.0, 5.0]).__next__
    left = TimeLeft(clock=clock)
    left.update(3, 10)
    assert left.update(3, 10) is None


def test_format_duration():
    assert format_duration(None) == ""
    assert format_duration(0.2) == "about 1 s"
    assert format_duration(42) == "about 42 s"
    assert format_duration(7 * 60 + 10) == "about 7 min"
    assert format_duration(85 * 60) == "about 1 h 25 min"
