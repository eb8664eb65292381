"""The order test's verdict follows its statistics."""

from __future__ import annotations

import pytest

from core.benchmark_order.confounds import OrderPattern
from core.benchmark_order.finding import NONE_MARGIN, order_finding
from core.benchmark_order.statistic import OrderTestResult, ShardResult


def result(differences: list[float], size: int = 4) -> OrderTestResult:
    shards = tuple(
        ShardResult(i, size * i, size * (i + 1), d, (-1.0, 1.0), False, 40) for i, d in enumerate(differences)
    )
    return OrderTestResult(shards, size * len(shards), 250, 2048, 1024, 0)


def spread(center: float, n: int = 20, width: float = 1.0) -> list[float]:
    """n differences around ``center``, symmetric, sd about ``width``."""
    return [center + width * ((i % 2) * 2 - 1) * (1 + i // 2 % 3) / 2 for i in range(n)]


@pytest.mark.parametrize(("center", "level"), [(2.0, "strong"), (0.5, "moderate"), (0.36, "weak")])
def test_p_values_grade_the_evidence(center, level):
    r = result(spread(center))
    finding = order_finding(r, "bench.jsonl")
    assert finding.level == level, (r.p_value, finding.headline)
    assert {"strong": r.p_value < 0.01, "moderate": 0.01 <= r.p_value < 0.05, "weak": 0.05 <= r.p_value < 0.1}[level]
    assert "bench.jsonl" in finding.headline and f"p = {r.p_value:.2g}" in finding.numbers


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
