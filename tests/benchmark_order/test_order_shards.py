"""Shards, the orders drawn for them, and the windows over a long shard."""

from __future__ import annotations

import math

import pytest

from core.benchmark_order.shards import shard_bounds, shard_orders, windows


def test_shards_are_consecutive_and_as_equal_as_the_count_allows():
    bounds = shard_bounds(10, 3)
    assert bounds == [(0, 4), (4, 7), (7, 10)]  # the first 10 mod 3 shards get one more
    assert shard_bounds(6, 3) == [(0, 2), (2, 4), (4, 6)]
    with pytest.raises(ValueError):
        shard_bounds(2, 3)


def test_a_small_shard_is_scored_in_every_other_order():
    drawn = shard_orders(4, 250, seed=0, shard_index=0)
    assert drawn.exhaustive
    assert len(drawn.shuffled) == math.factorial(4) - 1 == len(set(drawn.shuffled))
    assert (0, 1, 2, 3) not in drawn.shuffled


def test_a_large_shard_draws_seeded_orders_per_shard():
    first = shard_orders(8, 50, seed=3, shard_index=2)
    assert not first.exhaustive and len(first.shuffled) == 50
    assert all(sorted(order) == list(range(8)) for order in first.shuffled)
    assert shard_orders(8, 50, seed=3, shard_index=2) == first  # a resumed run draws the same
    assert shard_orders(8, 50, seed=3, shard_index=3) != first
    assert shard_orders(8, 50, seed=4, shard_index=2) != first


@pytest.mark.parametrize("length", [2, 7, 16, 17, 40, 101])
def test_windows_count_every_token_after_the_first_once_with_enough_context(length: int):
    context, stride = 16, 6
    spans = windows(length, context, stride)
    counted = [p for w in spans for p in range(w.scored_from, w.stop)]
    assert counted == list(range(1, length))
    for w in spans:
        assert w.stop - w.start <= context
        assert w.start <= w.scored_from
        if w.start > 0:  # every counted token has at least context - stride tokens before it in its window
            assert w.scored_from - w.start >= context - stride


def test_windows_need_a_stride_below_the_context():
    with pytest.raises(ValueError):
        windows(10, 8, 8)
