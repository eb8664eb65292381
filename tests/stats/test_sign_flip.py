"""The sign-flip test against enumerating every sign pattern by hand, and its sampled tail against the binomial."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from core.stats.sign_flip import sign_flip_p_value


def _binomial_tail(hits: int, n: int, p: float) -> float:
    return sum(math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(hits, n + 1))


def _brute_sign_flip(diffs: list[float]) -> float:
    nonzero = [d for d in diffs if d != 0]
    observed = sum(nonzero)
    sums = [
        sum(s * abs(d) for s, d in zip(signs, nonzero)) for signs in itertools.product((1, -1), repeat=len(nonzero))
    ]
    return sum(1 for total in sums if total >= observed - 1e-12) / len(sums)


def test_the_sign_flip_p_value_equals_enumerating_every_pattern_by_hand():
    # Three questions each finishing one more option in the published order: only all-plus reaches 3 -> 1/8.
    assert sign_flip_p_value([1, 1, 1]) == pytest.approx(1 / 8)
    assert sign_flip_p_value([0, 0]) == 1.0
    rng = np.random.default_rng(3)
    for _ in range(20):
        diffs = [float(x) for x in rng.integers(-2, 3, size=int(rng.integers(1, 12)))]
        assert sign_flip_p_value(diffs) == pytest.approx(_brute_sign_flip(diffs))


def test_the_sampled_sign_flip_p_value_is_close_to_the_exact_tail():
    # 30 differences of +1 or -1: the sum's tail is a binomial one; 20 of 30 positive gives P(Bin(30, .5) >= 20).
    diffs = [1.0] * 20 + [-1.0] * 10
    assert sign_flip_p_value(diffs) == pytest.approx(_binomial_tail(20, 30, 0.5), abs=0.006)
