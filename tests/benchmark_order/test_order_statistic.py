"""The test over shards: a one-sided t-test of the per-shard differences, checked by hand and against scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from core.benchmark_order.statistic import (
    OrderTestResult,
    ShardResult,
    shards_needed,
    smallest_sign_p_value,
    t_test_p_value,
)


def shard(index: int, canonical: float, shuffled: tuple[float, ...], size: int = 3) -> ShardResult:
    return ShardResult(index, size * index, size * (index + 1), canonical, shuffled, False, 10 * size)


def result(differences: list[float]) -> OrderTestResult:
    shards = tuple(shard(i, d, (-1.0, 1.0)) for i, d in enumerate(differences))  # shuffles average 0
    return OrderTestResult(shards, 3 * len(shards), 2, 2048, 1024, 0)


def test_a_shard_compares_its_published_order_with_its_shuffles():
    s = shard(0, -10.0, (-12.0, -9.0, -10.0, -15.0))
    assert s.shuffled_mean == pytest.approx(-11.5)
    assert s.difference == pytest.approx(1.5)
    assert s.p_value == pytest.approx((1 + 2) / 5)  # -9 and the tie -10 are at least as likely


def test_the_t_test_by_hand():
    diffs = [1.0, 2.0, 3.0, 0.5, -0.5]
    n, mean, sd = 5, np.mean(diffs), np.std(diffs, ddof=1)
    t = mean / (sd / math.sqrt(n))
    r = result(diffs)
    assert r.t_statistic == pytest.approx(t)
    assert r.p_value == pytest.approx(1 - stats.t.cdf(t, n - 1))
    assert t_test_p_value(diffs) == pytest.approx(stats.ttest_1samp(diffs, 0, alternative="greater").pvalue)
    low, high = r.difference_interval
    half = stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n)
    assert (low, high) == pytest.approx((mean - half, mean + half))
    assert r.canonical_first == 4
    assert r.sign_p_value == pytest.approx(sum(math.comb(5, k) for k in (4, 5)) / 32)


def test_degenerate_differences():
    assert t_test_p_value([2.0, 2.0, 2.0]) == 0.0
    assert t_test_p_value([0.0, 0.0, 0.0]) == 1.0
    assert t_test_p_value([3.0]) == 1.0


def test_fewer_than_five_shards_cannot_reach_five_percent_without_assuming_normality():
    assert shards_needed() == 5
    assert smallest_sign_p_value(4) > 0.05 > smallest_sign_p_value(5)
    assert result([1.0, 2.0, 3.0, 4.0]).smallest_reachable_p == 0.0625


def test_to_dict_carries_every_shard():
    document = result([1.0, -1.0, 2.0]).to_dict()
    assert document["n_shards"] == 3 and len(document["shards"]) == 3
    assert document["shards"][0]["first_example"] == 1 and document["shards"][0]["last_example"] == 3
    assert set(document) >= {"p_value", "t_statistic", "mean_difference", "mean_difference_ci95", "sign_test_p_value"}
