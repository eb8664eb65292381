"""The dataset-inference statistic on synthetic features: hand-checked pieces, power, and false positives."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from core.dataset_inference.finding import inference_finding
from core.dataset_inference.statistic import (
    InferenceResult,
    cohens_d,
    dataset_inference,
    one_split,
    split_power,
    usable_features,
)
from core.dataset_inference.statistic import texts_for_power as texts_needed  # not core.stats.finding.texts_needed
from core.errors import DataError
from core.stats.metrics import MetricResult

NAMES = ["loss", "zlib", "noise"]


def _features(n: int, shift: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """n suspect and n validation texts; only the first feature carries the (suspect-higher) shift."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(2 * n, 3))
    suspect = np.r_[np.ones(n, bool), np.zeros(n, bool)]
    x[suspect, 0] += shift
    x[:, 1] = x[:, 0] * 0.5 + rng.normal(size=2 * n)  # a correlated second detector, as loss and zlib are
    return x, suspect


def test_a_shift_in_one_detector_is_found_and_carries_the_weight():
    x, suspect = _features(100, 1.0, seed=1)
    result = dataset_inference(x, suspect, NAMES, n_splits=10, seed=0)
    assert result.p_value < 1e-4
    assert result.p_value == pytest.approx(min(1.0, 2 * np.median(result.split_p_values)))
    assert result.top_features(1)[0][0] == "loss"
    assert result.weights["loss"] > 0
    assert 0.6 < result.effect_size < 1.6  # d = 1 in the data; the combined score estimates it on halves
    assert (result.n_suspect, result.n_validation, len(result.split_p_values)) == (100, 100, 10)


def test_one_split_is_a_one_sided_welch_test_on_the_held_out_halves():
    x, suspect = _features(30, 0.8, seed=2)
    outcome = one_split(x, suspect, np.random.default_rng(5))
    a, b = outcome.suspect_scores, outcome.validation_scores
    assert (a.size, b.size) == (15, 15)  # the other half of each set
    # Welch's t and its degrees of freedom by hand, against the t distribution's upper tail
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    t = (a.mean() - b.mean()) / np.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1))
    assert outcome.t_statistic == pytest.approx(t)
    assert outcome.p_value == pytest.approx(stats.t.sf(t, df))
    pooled = np.sqrt(((a.size - 1) * a.var(ddof=1) + (b.size - 1) * b.var(ddof=1)) / (a.size + b.size - 2))
    assert cohens_d(a, b) == pytest.approx((a.mean() - b.mean()) / pooled)


def test_no_difference_gives_few_false_positives_over_many_seeds():
    rejections = 0
    for seed in range(40):
        x, suspect = _features(40, 0.0, seed=100 + seed)
        rejections += dataset_inference(x, suspect, NAMES, n_splits=5, seed=seed).p_value < 0.05
    assert rejections <= 4  # at most 10% at alpha = 0.05 (twice the median is conservative)


def test_missing_and_constant_features_are_left_out_and_texts_missing_a_kept_one_dropped():
    x, suspect = _features(20, 0.0, seed=3)
    x = np.c_[x, np.full(40, 2.0), np.where(np.arange(40) % 2 == 0, np.nan, 1.0)]
    x[3, 0] = np.nan  # one text misses a kept feature
    names = [*NAMES, "constant", "mostly missing"]
    kept_x, kept, left_out, rows = usable_features(x, names)
    assert kept == NAMES
    assert left_out == ["constant", "mostly missing"]
    assert rows.sum() == 39
    assert not rows[3]
    assert kept_x.shape == (40, 3)
    result = dataset_inference(x, suspect, names, n_splits=2)
    assert result.n_texts_dropped == 1
    assert result.n_suspect == 19
    with pytest.raises(DataError, match="at least 6 texts in each set"):
        dataset_inference(x[:8], suspect[:8], names)


def test_texts_needed_matches_a_simulation_of_the_whole_test():
    """The t-test power rule, checked against running the full procedure on fresh draws at that size."""
    d = 0.5
    n = texts_needed(d)
    assert n is not None
    assert 60 < n < 400
    assert split_power(d, n) >= 0.8 > split_power(d, n - 2)
    rng = np.random.default_rng(7)
    hits = 0
    for trial in range(40):
        x = rng.normal(size=(2 * n, 1))
        x[:n, 0] += d
        hits += (
            dataset_inference(x, np.r_[np.ones(n, bool), np.zeros(n, bool)], ["s"], n_splits=3, seed=trial).p_value
            < 0.05
        )
    assert 0.6 <= hits / 40 <= 1.0  # the rule aims at 80%; the median of 3 splits does a little better
    assert texts_needed(0.0) is None
    assert texts_needed(-0.3) is None


def _result(p: float, effect: float, n: int = 100) -> InferenceResult:
    return InferenceResult(
        p_value=p,
        split_p_values=(p / 2,) * 5,
        effect_size=effect,
        weights={"loss": 1.2},
        n_suspect=n,
        n_validation=n,
        features=("loss",),
    )


def _blind(auroc: float, low: float, high: float) -> MetricResult:
    return MetricResult(auroc=auroc, ci=(low, high), tpr_at_1_fpr=0.0, tpr_at_5_fpr=0.0, n=200)


def test_finding_levels_follow_the_p_value_and_the_blind_baseline():
    chance = _blind(0.52, 0.44, 0.60)
    assert inference_finding(_result(0.003, 0.8), chance).level == "strong"
    assert inference_finding(_result(0.03, 0.4), chance).level == "moderate"
    assert inference_finding(_result(0.07, 0.3), chance).level == "weak"
    strong = inference_finding(_result(0.003, 0.8), chance, suspect="my book")
    assert "trained on my book" in strong.headline
    assert "p = 0.003" in strong.numbers
    # a wording difference makes even a tiny p-value untrustworthy
    confounded = inference_finding(_result(1e-6, 2.0), _blind(0.93, 0.88, 0.97))
    assert confounded.level == "confounded"
    assert "wording alone" in confounded.headline
    # no difference: inconclusive when the effect's interval reaches a small effect (d 0.2), none when it does not
    small = inference_finding(_result(0.4, 0.2, n=40), chance)
    assert small.level == "inconclusive"
    assert "more texts per set would settle it" in small.headline
    assert inference_finding(_result(0.6, -0.1, n=400), chance).level == "none"
    assert inference_finding(_result(0.6, 0.1, n=400), None).level == "inconclusive"


def test_many_detectors_on_few_texts_get_an_overfitting_caveat():
    chance = _blind(0.52, 0.44, 0.60)
    few = InferenceResult(
        p_value=0.4,
        split_p_values=(0.2,) * 3,
        effect_size=0.1,
        weights={f"d{i}": 0.1 for i in range(16)},
        n_suspect=36,
        n_validation=36,
        features=tuple(f"d{i}" for i in range(16)),
    )
    assert any("may overfit" in c for c in inference_finding(few, chance).caveats)
    assert not any("may overfit" in c for c in inference_finding(_result(0.4, 0.1, n=100), chance).caveats)
