"""The share-of-items reading against hand-computed binomial values."""

from __future__ import annotations

import math

import pytest

from core.stats.proportion import ShareReading


def _binomial_tail(hits: int, n: int, p: float) -> float:
    return sum(math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(hits, n + 1))


def test_the_p_value_is_the_binomial_tail_computed_by_hand():
    # 3 of 4 questions in their published order first, chance 1/2: (4 + 1) / 16 = 0.3125.
    assert ShareReading(3, 4, 0.5).p_value == pytest.approx(5 / 16)
    for hits, n, p in [(0, 10, 0.05), (4, 20, 0.05), (12, 30, 1 / 6), (30, 30, 0.25)]:
        assert ShareReading(hits, n, p).p_value == pytest.approx(_binomial_tail(hits, n, p))


def test_the_interval_is_clopper_pearson():
    # 0 of n: the upper end solves (1 - hi)^n = 0.025; n of n: the lower end solves lo^n = 0.025.
    assert ShareReading(0, 20, 0.05).interval[1] == pytest.approx(1 - 0.025 ** (1 / 20))
    assert ShareReading(20, 20, 0.05).interval[0] == pytest.approx(0.025 ** (1 / 20))


def test_levels_follow_the_interval_against_chance_and_the_margin():
    assert ShareReading(20, 20, 0.05).level == "strong"  # lower end 0.83
    assert ShareReading(6, 20, 0.05).level == "weak"  # lower end 0.12, 0.07 above chance
    assert ShareReading(0, 200, 0.05).level == "none"  # upper end 0.018, inside chance + 0.05
    small = ShareReading(0, 20, 0.05)  # upper end 0.17: a useful excess is not ruled out
    assert small.level == "inconclusive"
    assert small.items_needed() is not None and small.items_needed() > 20


def test_impossible_counts_are_refused():
    with pytest.raises(ValueError):
        ShareReading(3, 2, 0.5)
    with pytest.raises(ValueError):
        ShareReading(1, 2, 1.0)


def test_items_needed_is_the_fewest_at_which_the_same_share_settles():
    # 0 of 24 at chance 5%: the upper end 1 - 0.025^(1/n) drops to 10% (chance + margin) from n = 36 on.
    reading = ShareReading(0, 24, 0.05)
    assert reading.items_needed() == 36
    assert ShareReading(0, 36, 0.05).level == "none"
    assert ShareReading(0, 35, 0.05).level == "inconclusive"
