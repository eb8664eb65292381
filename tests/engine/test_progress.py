"""The CLI progress bar: it draws counts and a bar even where the terminal reports no width."""

from __future__ import annotations

import io

from core.engine.progress import (
    FALLBACK_BAR_COLUMNS,
    FALLBACK_TERMINAL_ROWS,
    TimeLeft,
    _bar_shape,
    announced,
    format_duration,
    text_progress,
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


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_off_a_terminal_progress_is_a_plain_line_at_each_tenth_with_the_time_left():
    """A log file, CI or a pipe gets lines it can show, not a bar redrawn in place (nor nothing at all)."""
    stream = io.StringIO()  # not a terminal
    with tqdm_progress("fresh passages", unit="passage", stream=stream) as progress:
        for done in range(0, 201, 8):
            progress(done, 200)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 10, lines
    assert lines[0].startswith("fresh passages: 24 of 200 passages (12%), about ")
    assert lines[0].endswith(" left")
    assert lines[-1] == "fresh passages: 200 of 200 passages (100%), done"
    assert "\r" not in stream.getvalue()


def test_plain_lines_count_the_tenths_of_the_work_left_and_time_only_new_work():
    clock, stream = _Clock(), io.StringIO()
    progress = text_progress("scoring", stream, unit="text", clock=clock)
    progress(150, 250)  # resumed: 150 stored before
    for done in range(160, 251, 10):
        clock.now += 2.0
        progress(done, 250)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 10
    assert lines[0] == "scoring: 160 of 250 texts (64%), about 18 s left"  # 90 left at 10 per 2 s
    assert lines[-1] == "scoring: 250 of 250 texts (100%), done"


def test_a_one_time_wait_is_announced_once_with_its_length_and_never_when_nothing_is_left():
    clock, stream, seen = _Clock(), io.StringIO(), []
    progress = announced(
        lambda n, duration: f"Scoring {n} passages once, {duration}.",
        lambda done, total: seen.append((done, total)),
        stream,
        clock=clock,
    )
    progress(100, 500)
    assert stream.getvalue() == ""  # the pace is not known yet
    clock.now = 6.0
    progress(116, 500)
    assert stream.getvalue() == "Scoring 400 passages once, about 2 min.\n"  # 16 in 6 s: 400 in 150 s
    clock.now = 12.0
    progress(132, 500)
    assert stream.getvalue().count("Scoring") == 1
    assert seen == [(100, 500), (116, 500), (132, 500)]  # the inner callback sees every report
    quiet = io.StringIO()
    done = announced(lambda n, duration: "never", None, quiet, clock=clock)
    done(500, 500)
    assert quiet.getvalue() == ""
    single = io.StringIO()
    one = announced(lambda n, duration: f"{n} to score ({duration or 'no time yet'})", None, single, clock=clock)
    one(0, 3)
    clock.now += 4.0
    one(3, 3)  # all of it in one step: said when it ends, with the time it took
    assert single.getvalue() == "3 to score (about 4 s)\n"
