"""Metrics against sklearn and hand-computed values; bootstrap determinism; baselines on real data."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score, roc_curve

from core.config import SHARED_DATA_DIR
from core.data.labelled import load_labelled_dataset
from core.errors import DataError
from core.stats.metrics import (
    MetricResult,
    auroc,
    blind_baseline,
    bootstrap_aurocs,
    bootstrap_ci,
    bootstrap_draws,
    ensemble,
    evaluate,
    roc_points,
    tpr_at_fpr,
)

DATA = SHARED_DATA_DIR


def synthetic(n: int = 300, seed: int = 3, decimals: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = np.round(rng.normal(size=n) + 0.6 * y, decimals)  # rounding creates many ties
    return y, s


def test_auroc_hand_computed_with_ties():
    # Pairs (member, non-member): (0.8 vs 0.1) win, (0.8 vs 0.4) win, (0.4 vs 0.1) win, (0.4 vs 0.4) tie.
    assert auroc([1, 1, 0, 0], [0.8, 0.4, 0.1, 0.4]) == pytest.approx(3.5 / 4)
    assert auroc([1, 0], [1.0, 0.0]) == 1.0
    assert auroc([1, 0], [0.0, 1.0]) == 0.0
    assert auroc([1, 0, 1, 0], [5, 5, 5, 5]) == 0.5


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_auroc_equals_sklearn(seed):
    y, s = synthetic(seed=seed)
    assert auroc(y, s) == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    assert auroc(list(y), [float(v) for v in s]) == pytest.approx(roc_auc_score(y, s), abs=1e-12)


def test_roc_points_equal_sklearn_curve():
    y, s = synthetic()
    fpr, tpr = roc_points(y, s)
    ref_fpr, ref_tpr, _ = roc_curve(y, s, drop_intermediate=False)
    np.testing.assert_allclose(fpr, ref_fpr)
    np.testing.assert_allclose(tpr, ref_tpr)
    assert np.trapezoid(tpr, fpr) == pytest.approx(auroc(y, s))


def test_tpr_at_fpr_hand_computed_and_against_sklearn():
    # 20 non-members scored 0..19, members at 19.5 and 18.5 (above all but the top one or two non-members).
    y = [0] * 20 + [1, 1, 1, 1]
    s = list(range(20)) + [19.5, 18.5, 10.5, 2]
    assert tpr_at_fpr(y, s, 0.0) == 0.25  # only the 19.5 member beats every non-member
    assert tpr_at_fpr(y, s, 0.05) == 0.5  # one false positive (19) allowed: 19.5 and 18.5
    assert tpr_at_fpr(y, s, 1.0) == 1.0
    ys, ss = synthetic(n=500, seed=7)
    ref_fpr, ref_tpr, _ = roc_curve(ys, ss)
    for target in (0.01, 0.05, 0.2):
        assert tpr_at_fpr(ys, ss, target) == pytest.approx(ref_tpr[ref_fpr <= target].max())
    with pytest.raises(DataError, match="between 0 and 1"):
        tpr_at_fpr(ys, ss, 5)


def test_bootstrap_matches_slow_per_resample_sklearn():
    y, s = synthetic(n=120)
    draws = bootstrap_draws(y.size, y, 200, seed=5)
    slow = np.array([roc_auc_score(y[d], s[d]) for d in draws])
    np.testing.assert_allclose(bootstrap_aurocs(y, s, 200, seed=5), slow, atol=1e-12)
    lo, hi = bootstrap_ci(y, s, n_resamples=200, seed=5)
    assert (lo, hi) == pytest.approx(tuple(np.quantile(slow, [0.025, 0.975])))


def test_bootstrap_ci_deterministic_and_seed_dependent():
    y, s = synthetic()
    a = bootstrap_ci(y, s)
    assert a == bootstrap_ci(y, s)
    assert a != bootstrap_ci(y, s, seed=1)
    assert a[0] < auroc(y, s) < a[1]
    narrow = bootstrap_ci(y, s, level=0.5)
    assert a[0] < narrow[0] < narrow[1] < a[1]


def test_bootstrap_redraws_single_class_resamples():
    # With one member in four texts, many resamples hold no member; they are redrawn, never NaN.
    y = np.array([1, 0, 0, 0])
    s = np.array([0.9, 0.1, 0.2, 0.3])
    draws = bootstrap_draws(4, y, 500, seed=0)
    positives = y[draws].sum(axis=1)
    assert ((positives > 0) & (positives < 4)).all()
    values = bootstrap_aurocs(y, s, 500, seed=0)
    assert np.isfinite(values).all()
    assert (values == 1.0).all()
    assert bootstrap_ci(y, s, n_resamples=500) == (1.0, 1.0)


def test_infinite_scores_rank_like_values():
    inf = np.inf
    y = np.array([1, 0, 1, 0, 1, 0])
    s = np.array([inf, inf, 0.0, 1.0, -inf, -inf])
    # Member/non-member pairs: inf vs (inf ½, 1 win, -inf win); 0 vs (inf, 1 lose; -inf win);
    # -inf vs (inf, 1 lose; -inf ½): 2.5 + 1 + 0.5 = 4 of 9.
    assert auroc(y, s) == pytest.approx(4 / 9)
    fpr, tpr = roc_points(y, s)
    np.testing.assert_allclose(fpr, [0, 1 / 3, 2 / 3, 2 / 3, 1])
    np.testing.assert_allclose(tpr, [0, 1 / 3, 1 / 3, 2 / 3, 1])
    draws = bootstrap_draws(6, y, 100, seed=0)
    slow = [auroc(y[d], s[d]) for d in draws]
    np.testing.assert_allclose(bootstrap_aurocs(y, s, 100, seed=0), slow, atol=1e-12)


def test_nan_scores_dropped_and_counted():
    y, s = synthetic()
    with_nan = s.copy()
    with_nan[[3, 10, 50]] = np.nan
    keep = ~np.isnan(with_nan)
    result = evaluate(y, with_nan)
    assert result.n == y.size - 3
    assert result.n_dropped == 3
    assert result.auroc == pytest.approx(roc_auc_score(y[keep], s[keep]))


def test_edge_cases_are_clear_errors():
    with pytest.raises(DataError, match="both members and non-members"):
        auroc([1, 1, 1], [0.1, 0.2, 0.3])
    with pytest.raises(DataError, match="both members and non-members"):
        auroc([1, 0, 0], [np.nan, 0.1, 0.2])
    with pytest.raises(DataError, match="same length"):
        auroc([1, 0], [0.1])
    with pytest.raises(DataError, match="0 \\(non-member\\) or 1"):
        auroc([2, 0], [0.1, 0.2])


def test_evaluate_and_to_dict():
    y, s = synthetic()
    result = evaluate(y, s)
    assert isinstance(result, MetricResult)
    assert result.auroc == pytest.approx(roc_auc_score(y, s))
    assert result.ci == bootstrap_ci(y, s)
    assert result.tpr_at_1_fpr == tpr_at_fpr(y, s, 0.01)
    assert result.tpr_at_5_fpr == tpr_at_fpr(y, s, 0.05)
    assert result.n == 300
    assert result.to_dict() == {
        "auroc": result.auroc,
        "ci": [result.ci[0], result.ci[1]],
        "tpr_at_1_fpr": result.tpr_at_1_fpr,
        "tpr_at_5_fpr": result.tpr_at_5_fpr,
    }
    with pytest.raises(AttributeError):
        result.auroc = 0.0  # type: ignore[misc]


def test_blind_baseline_matches_independent_cross_validation():
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold

    ds = load_labelled_dataset(str(DATA / "wikimia_length128.parquet"))
    result = blind_baseline(ds.texts, ds.labels)
    # Independent path: explicit fold loop, fitting the vectoriser on each training fold only.
    texts, y = np.array(ds.texts, dtype=object), np.array(ds.labels)
    oof = np.zeros(len(y))
    for train, test in StratifiedKFold(5, shuffle=True, random_state=0).split(texts, y):
        vectoriser = TfidfVectorizer(sublinear_tf=True)
        clf = LogisticRegression(max_iter=1000).fit(vectoriser.fit_transform(texts[train]), y[train])
        oof[test] = clf.predict_proba(vectoriser.transform(texts[test]))[:, 1]
    assert result.auroc == pytest.approx(roc_auc_score(y, oof))
    # WikiMIA's date split is separable from wording alone: the reason this baseline exists.
    assert result.auroc > 0.85
    assert result.n == 250


def test_blind_baseline_near_chance_on_random_labels():
    rng = np.random.default_rng(0)
    words = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta"]
    texts = [" ".join(rng.choice(words, 12)) for _ in range(200)]
    labels = list(rng.integers(0, 2, 200))
    result = blind_baseline(texts, labels)
    assert result.ci[0] < 0.5 < result.ci[1] or abs(result.auroc - 0.5) < 0.1


def test_blind_baseline_validates():
    with pytest.raises(DataError, match="at least 2 members and 2 non-members"):
        blind_baseline(["a b", "c d", "e f"], [1, 0, 0])
    with pytest.raises(DataError, match="3 texts but 2 labels"):
        blind_baseline(["a", "b", "c"], [1, 0])
    with pytest.raises(DataError, match="could not be fitted"):
        blind_baseline(["!", "?", "-", "."], [1, 0, 1, 0], folds=2)


def test_ensemble_learns_informative_scores_and_survives_nan():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 400)
    strong = y + rng.normal(0, 0.7, 400)
    reversed_signal = -(y + rng.normal(0, 0.7, 400))  # informative but oriented the wrong way
    noise = rng.normal(size=400)
    with_gaps = strong.copy()
    with_gaps[rng.choice(400, 40, replace=False)] = np.nan
    table = {"strong": strong, "reversed": reversed_signal, "noise": noise, "gaps": with_gaps, "empty": [np.nan] * 400}
    result = ensemble(table, y)
    best_single = max(auroc(y, strong), auroc(y, -reversed_signal))
    assert result.auroc > best_single - 0.01
    assert result.auroc > 0.85
    assert result.n == 400
    assert result == ensemble(table, y)


def test_ensemble_matches_independent_out_of_fold_fit():
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold

    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, 150)
    x = np.column_stack([y + rng.normal(0, 1, 150), rng.normal(size=150)])
    result = ensemble({"a": x[:, 0], "b": x[:, 1]}, y)
    oof = np.zeros(150)
    for train, test in StratifiedKFold(5, shuffle=True, random_state=0).split(x, y):
        mean, std = x[train].mean(axis=0), x[train].std(axis=0)
        clf = LogisticRegression(max_iter=1000).fit((x[train] - mean) / std, y[train])
        oof[test] = clf.predict_proba((x[test] - mean) / std)[:, 1]
    assert result.auroc == pytest.approx(roc_auc_score(y, oof))


def test_ensemble_validates():
    with pytest.raises(DataError, match="at least one"):
        ensemble({}, [0, 1])
    with pytest.raises(DataError, match="every method's scores are missing"):
        ensemble({"a": [np.nan] * 6}, [0, 1] * 3)
    with pytest.raises(DataError, match="4 texts but there are 2 labels"):
        ensemble({"a": [1, 2, 3, 4]}, [0, 1])
