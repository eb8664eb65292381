"""The CLI progress bar: it draws counts and a bar even where the terminal reports no width."""

from __future__ import annotations

import io

from core.progress import FALLBACK_BAR_COLUMNS, FALLBACK_TERMINAL_ROWS, _bar_shape, tqdm_progress


def test_bar_shows_counts_and_percentages():
    stream = io.StringIO()
    with tqdm_progress("scoring", disable=False, stream=stream) as progress:
        progress(16, 48)
        progress(48, 48)
    frames = [f for f in stream.getvalue().split("\r") if f.strip()]
    assert any("scoring:  33%" in f and "16/48" in f for f in frames)
    assert "scoring: 100%" in frames[-1] and "48/48" in frames[-1]
    assert "|" + "#" * 10 in frames[-1]  # the bar itself (ASCII on a stream that is not a terminal)


def test_stream_without_terminal_size_gets_fixed_shape():
    assert _bar_shape(io.StringIO()) == {"ncols": FALLBACK_BAR_COLUMNS, "nrows": FALLBACK_TERMINAL_ROWS}


def test_disabled_bar_writes_nothing():
    stream = io.StringIO()
    with tqdm_progress("scoring", disable=True, stream=stream) as progress:
        progress(1, 2)
    assert stream.getvalue() == ""
