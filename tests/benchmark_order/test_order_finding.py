"""The order test's verdict follows its statistics."""

from __future__ import annotations

import pytest

from core.benchmark_order.confounds import OrderPattern
from core.benchmark_order.finding import NONE_MARGIN, order_finding, per_example_interval
from core.benchmark_order.statistic import OrderTestResult, ShardResult


def result(differences: list[float], size: int = 4) -> OrderTestResult:
    shards = tuple(
        ShardResult(i, size * i, size * (i + 1), d, (-1.0, 1.0), False, 40) for i, d in enumerate(differences)
    )
    return OrderTestResult(shards, size * len(shards), 250, 2048, 1024, 0)


def spread(center: float, n: int = 20, width: float = 1.0) -> list[float]:
    """n differences around ``center``, symmetric, sd about ``width``."""
    return [center + width * ((i % 2) * 2 - 1) * (1 + i // 2 % 3) / 2 for i in range(n)]


@pytest.mark.parametrize(
    ("center", "level", "confidence"), [(2.0, "strong", 0.999), (0.8, "moderate", 0.99), (0.5, "weak", 0.95)]
)
def test_p_values_grade_the_evidence(center, level, confidence):
    r = result(spread(center))
    finding = order_finding(r, "bench.jsonl")
    assert finding.level == level, (r.p_value, finding.headline)
    assert {"strong": r.p_value < 0.001, "moderate": 0.001 <= r.p_value < 0.01, "weak": 0.01 <= r.p_value < 0.05}[level]
    assert "bench.jsonl" in finding.headline and f"p = {r.p_value:.2g}" in finding.numbers
    assert per_example_interval(r, confidence)[1] > 0
    lo, hi = per_example_interval(r)[1:]
    assert lo > 0  # the 95% interval the finding shows lies above zero: the level never contradicts it
    assert f"95% interval {lo:+.3f} to {hi:+.3f}" in finding.numbers


@pytest.mark.parametrize("center", [0.9, 0.6, 0.45])
def test_a_p_value_below_a_threshold_is_not_that_level_while_its_interval_includes_zero(center):
    """p = 0.0006, 0.010 and 0.037: under 0.001, 0.05 and 0.05, yet the 99.9%, 99% or 95% interval includes zero,
    as on the README's random-weight example (p 0.046, 95% interval -0.011 to +0.110): that level is not read."""
    r = result(spread(center))
    finding = order_finding(r, "b")
    expected = {0.9: ("moderate", 0.999), 0.6: ("weak", 0.99), 0.45: (None, 0.95)}[center]
    assert per_example_interval(r, expected[1])[1] <= 0
    if expected[0] is None:
        assert r.p_value < 0.05 and finding.level in ("none", "inconclusive")
    else:
        assert finding.level == expected[0]


def test_shards_whose_orders_all_read_the_same_are_inconclusive_not_none():
    shards = tuple(ShardResult(i, 4 * i, 4 * (i + 1), -7.0, (-7.0,) * 23, True, 40) for i in range(6))
    finding = order_finding(OrderTestResult(shards, 24, 250, 2048, 1024, 0), "same.jsonl")
    assert finding.level == "inconclusive"
    assert "every order of the examples reads the same" in finding.headline


def test_none_only_when_the_interval_lies_below_the_margin():
    tight = result(spread(0.0, n=40, width=0.2))
    assert order_finding(tight, "b").level == "none"
    loose = result(spread(0.0, n=10, width=6.0))
    finding = order_finding(loose, "b")
    assert finding.level == "inconclusive" and "more shards would settle it" in finding.headline
    assert f"no-effect margin {NONE_MARGIN:g}" in finding.numbers


def test_too_few_shards_are_inconclusive_whatever_the_p_value():
    r = result([5.0, 5.1, 4.9, 5.05])
    assert r.p_value < 0.01
    finding = order_finding(r, "b")
    assert finding.level == "inconclusive" and "4 shards" in finding.headline and "5 shards" in finding.headline
    assert any("0.062" in c for c in finding.caveats)


def test_a_pattern_in_the_order_confounds_the_test():
    pattern = OrderPattern("column 'difficulty'", 30, 2)
    finding = order_finding(result(spread(2.0)), "b", [pattern])
    assert finding.level == "confounded"
    assert "difficulty" in finding.headline and "not a fair test" in finding.headline.lower()
    assert any("30 of 32" in line for line in finding.evidence)


def test_a_count_out_of_reach_says_what_it_means():
    """An unseen file's shards spread wide around zero: thousands more would be needed; the headline says that no
    benchmark file fills that, instead of leaving a reader with the bare count."""
    finding = order_finding(result(spread(0.05, n=30, width=20.0)), "unseen.jsonl")
    assert finding.level == "inconclusive"
    assert "more shards would settle it, far more than one benchmark file fills" in finding.headline
    near = order_finding(result(spread(0.5, n=10, width=2.0)), "b")
    assert "far more than" not in near.headline or near.level != "inconclusive"
