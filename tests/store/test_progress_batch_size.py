"""The one batch-size rule for runs a person watches (the Membership benchmark and Dataset inference pages)."""

from __future__ import annotations

from core.store.runloop import DEFAULT_BATCH_SIZE, PROGRESS_STEPS, progress_batch_size


def test_the_bar_moves_at_least_fifty_times_and_batches_never_exceed_the_default():
    assert (PROGRESS_STEPS, DEFAULT_BATCH_SIZE) == (50, 16)
    assert [progress_batch_size(n) for n in (0, 1, 99, 100, 128, 149, 150, 799, 800, 10_000)] == [
        1,
        1,
        1,
        2,
        2,
        2,
        3,
        15,
        16,
        16,
    ]


def test_a_smaller_largest_batch_caps_it():
    assert progress_batch_size(10_000, largest=4) == 4
    assert progress_batch_size(120, largest=4) == 2


def test_the_membership_runs_default_batch_is_the_run_loops():
    from core.membership.benchmark import DEFAULT_BATCH_SIZE as MEMBERSHIP_DEFAULT

    assert MEMBERSHIP_DEFAULT is DEFAULT_BATCH_SIZE
