"""Batch grouping by hand: which rows go together, and that every row is placed exactly once."""

from __future__ import annotations

import pytest

from core.engine.batching import length_batches, split_by_extent


def test_length_batches_longest_first_within_budget():
    # widths 5, 3, 4, 1, 2 with 10 tokens per batch: 5+5 fits (2 rows of width 5), then 3 rows of 2 ...
    assert length_batches([5, 3, 4, 1, 2], 10) == [[0, 2], [1, 4, 3]]
    assert length_batches([5, 3, 4, 1, 2], 10, max_rows=2) == [[0, 2], [1, 4], [3]]


def test_split_by_extent_bounds_rows_times_widest():
    extents = [100, 40, 90, 10, 45]
    # widest first: 100, 90 -> 2 x 100 = 200 fits 200; 45 would make 3 x 100 = 300
    assert split_by_extent([0, 1, 2, 3, 4], extents, 200) == [[0, 2], [4, 1, 3]]
    # a row wider than the budget gets a part of its own; nothing is dropped or repeated
    parts = split_by_extent([0, 1, 2, 3, 4], extents, 95)
    assert parts == [[0], [2], [4, 1], [3]]
    assert sorted(i for part in parts for i in part) == [0, 1, 2, 3, 4]
    assert split_by_extent([], extents, 10) == []
    with pytest.raises(ValueError):
        split_by_extent([0], extents, 0)
