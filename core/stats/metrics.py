"""How well a score separates members (label 1) from non-members (label 0).

Scores are oriented higher = more likely a member, so AUROC 0.5 is chance and 1.0 is perfect. Every
AUROC comes with a 95% bootstrap interval, because benchmark samples are small (a few hundred texts)
and two methods 0.02 apart are usually indistinguishable. The blind baseline answers "could a model-free
text classifier tell the two classes apart?": date-split benchmarks often can, and then a high AUROC
says little about the model.

NaN scores (e.g. a method that could not be computed for one text) are dropped and counted in
``MetricResult.n_dropped``; infinite scores are kept, they order like any other value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import rankdata

from core.errors import DataError
from core.stats.bootstrap import CI_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED, percentile_interval, resample_indices

Labels = Sequence[int] | np.ndarray
"""0/1 labels: a list, or an array as the functions here pass on to each other."""
Scores = Sequence[float] | np.ndarray


@dataclass(frozen=True)
class MetricResult:
    """One score's separation of members from non-members."""

    auroc: float
    ci: tuple[float, float]
    """95% bootstrap interval of the AUROC (1000 resamples, fixed seed)."""
    tpr_at_1_fpr: float
    """Share of members caught while at most 1% of non-members are flagged."""
    tpr_at_5_fpr: float
    n: int
    """Texts the metrics were computed on (after dropping NaN scores)."""
    n_dropped: int = 0
    """Texts left out because their score was NaN."""

    def to_dict(self) -> dict[str, object]:
        return {
            "auroc": self.auroc,
            "ci": [self.ci[0], self.ci[1]],
            "tpr_at_1_fpr": self.tpr_at_1_fpr,
            "tpr_at_5_fpr": self.tpr_at_5_fpr,
        }


def _clean(labels: Labels, scores: Scores) -> tuple[np.ndarray, np.ndarray, int]:
    """Validated label/score arrays with NaN scores dropped, and how many were dropped."""
    y = np.asarray(labels)
    s = np.asarray(scores, dtype=np.float64)
    if y.ndim != 1 or s.ndim != 1 or y.shape != s.shape:
        raise DataError(f"Labels and scores must be two lists of the same length (got {y.shape} and {s.shape}).")
    if y.size and not np.isin(y, (0, 1)).all():
        bad = sorted({repr(v) for v in y[~np.isin(y, (0, 1))].tolist()})[:5]
        raise DataError(f"Labels must be 0 (non-member) or 1 (member); found {', '.join(bad)}.")
    keep = ~np.isnan(s)
    y, s = y[keep].astype(np.int64), s[keep]
    n_pos = int(y.sum())
    if n_pos == 0 or n_pos == y.size:
        raise DataError(
            f"Metrics need both members and non-members with a score; got {n_pos} members and "
            f"{y.size - n_pos} non-members ({int((~keep).sum())} NaN scores dropped)."
        )
    return y, s, int((~keep).sum())


def _auroc_clean(y: np.ndarray, s: np.ndarray) -> float:
    """Mann-Whitney U / (n_pos · n_neg) with midranks, so ties count one half."""
    ranks = rankdata(s)
    n_pos = int(y.sum())
    n_neg = y.size - n_pos
    u = ranks[y == 1].sum() - n_pos * (n_pos + 1) / 2.0
    return float(u / (n_pos * n_neg))


def auroc(labels: Labels, scores: Scores) -> float:
    """Area under the ROC curve: the probability a random member outscores a random non-member."""
    y, s, _ = _clean(labels, scores)
    return _auroc_clean(y, s)


def roc_points(labels: Labels, scores: Scores) -> tuple[np.ndarray, np.ndarray]:
    """(fpr, tpr) at every distinct threshold, from (0, 0) to (1, 1); NaN scores dropped."""
    y, s, _ = _clean(labels, scores)
    order = np.argsort(-s, kind="mergesort")
    s_sorted, y_sorted = s[order], y[order]
    # The last index of each run of equal scores: one ROC point per distinct threshold.
    last = np.r_[np.flatnonzero(s_sorted[1:] != s_sorted[:-1]), s_sorted.size - 1]
    tp = np.cumsum(y_sorted)[last]
    fp = (last + 1) - tp
    fpr = np.r_[0.0, fp / (y.size - y.sum())]
    tpr = np.r_[0.0, tp / y.sum()]
    return fpr, tpr


def tpr_at_fpr(labels: Labels, scores: Scores, fpr: float) -> float:
    """Highest true-positive rate reachable by a threshold whose false-positive rate is at most ``fpr``."""
    if not 0.0 <= fpr <= 1.0:
        raise DataError(f"The false-positive rate must be between 0 and 1, got {fpr}.")
    fprs, tprs = roc_points(labels, scores)
    return float(tprs[fprs <= fpr + 1e-12].max())


def bootstrap_ci(
    labels: Labels,
    scores: Scores,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = CI_LEVEL,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the AUROC; the same inputs and seed always give the same interval.

    Each resample draws n texts with replacement. A resample holding a single class has no AUROC, so it
    is redrawn (from the same generator, so results stay deterministic).
    """
    if n_resamples < 1:
        raise DataError("n_resamples must be at least 1.")
    if not 0 < level < 1:
        raise DataError(f"level must be between 0 and 1, got {level}.")
    y, s, _ = _clean(labels, scores)
    return percentile_interval(bootstrap_aurocs(y, s, n_resamples, seed), level)


def bootstrap_draws(n: int, y: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """(n_resamples, n) row indices; rows holding one class only are redrawn in order until valid."""
    rng = np.random.default_rng(seed)
    draws = resample_indices(rng, n, n_resamples)
    while True:
        positives = y[draws].sum(axis=1)
        invalid = np.flatnonzero((positives == 0) | (positives == n))
        if invalid.size == 0:
            return draws
        draws[invalid] = resample_indices(rng, n, invalid.size)


def bootstrap_aurocs(y: np.ndarray, s: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """AUROC of every resample at once, as weighted Mann-Whitney counts over the sorted scores.

    A resample is a vector of counts w (how often each text was drawn). With texts grouped by equal score,
    AUROC = Σ_groups W⁺_g · (W⁻ below g + ½ W⁻_g) / (W⁺ · W⁻), computed for all resamples in one pass.
    """
    n = y.size
    draws = bootstrap_draws(n, y, n_resamples, seed)
    counts = np.zeros((n_resamples, n), dtype=np.float64)
    np.add.at(counts, (np.repeat(np.arange(n_resamples), n), draws.ravel()), 1.0)
    order = np.argsort(s, kind="mergesort")
    s_sorted, y_sorted = s[order], y[order]
    counts = counts[:, order]
    group = np.r_[0, np.cumsum(s_sorted[1:] != s_sorted[:-1])]  # not np.diff: inf − inf is NaN
    n_groups = int(group[-1]) + 1
    pos = np.zeros((n_resamples, n_groups))
    neg = np.zeros((n_resamples, n_groups))
    np.add.at(pos.T, group[y_sorted == 1], counts[:, y_sorted == 1].T)
    np.add.at(neg.T, group[y_sorted == 0], counts[:, y_sorted == 0].T)
    neg_below = np.cumsum(neg, axis=1) - neg
    wins = (pos * (neg_below + 0.5 * neg)).sum(axis=1)
    return wins / (pos.sum(axis=1) * neg.sum(axis=1))


def evaluate(
    labels: Labels,
    scores: Scores,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> MetricResult:
    """AUROC, its 95% bootstrap interval and TPR at 1% / 5% FPR for one score."""
    y, s, dropped = _clean(labels, scores)
    return MetricResult(
        auroc=_auroc_clean(y, s),
        ci=bootstrap_ci(y, s, n_resamples=n_resamples, seed=seed),
        tpr_at_1_fpr=tpr_at_fpr(y, s, 0.01),
        tpr_at_5_fpr=tpr_at_fpr(y, s, 0.05),
        n=int(y.size),
        n_dropped=dropped,
    )


def _folds(labels: np.ndarray, folds: int, what: str) -> int:
    smallest = int(min(labels.sum(), labels.size - labels.sum()))
    if folds < 2:
        raise DataError(f"The {what} needs at least 2 cross-validation folds, got {folds}.")
    if smallest < 2:
        raise DataError(f"The {what} needs at least 2 members and 2 non-members (smallest class: {smallest}).")
    return min(folds, smallest)


def blind_baseline(texts: Sequence[str], labels: Labels, folds: int = 5, seed: int = DEFAULT_SEED) -> MetricResult:
    """A model-free classifier on the same labels: TF-IDF bag of words + logistic regression.

    Out-of-fold member probabilities from stratified k-fold cross-validation are scored like any method.
    An AUROC well above 0.5 here means the classes differ in wording alone (e.g. dates, topics), so the
    detectors' AUROCs on this data must be read against it.
    """
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from sklearn.pipeline import make_pipeline

    if len(texts) != len(labels):
        raise DataError(f"Got {len(texts)} texts but {len(labels)} labels.")
    y, _, _ = _clean(labels, np.zeros(len(labels)))
    k = _folds(y, folds, "blind baseline")
    model = make_pipeline(
        TfidfVectorizer(sublinear_tf=True, min_df=1, ngram_range=(1, 1)),
        LogisticRegression(max_iter=1000, C=1.0),
    )
    splitter = StratifiedKFold(n_splits=k, shuffle=True, random_state=seed)
    try:
        probabilities = cross_val_predict(model, list(texts), y, cv=splitter, method="predict_proba")[:, 1]
    except ValueError as exc:  # e.g. a fold whose texts hold no word at all
        raise DataError(f"The blind baseline could not be fitted on these texts: {exc}") from exc
    return evaluate(y, probabilities, seed=seed)


def ensemble(
    score_table: Mapping[str, Scores],
    labels: Labels,
    folds: int = 5,
    seed: int = DEFAULT_SEED,
) -> MetricResult:
    """Combine methods: logistic regression over standardised scores, evaluated out-of-fold.

    Within each training fold, missing (NaN) and infinite scores are replaced by the fold's median, each
    score is standardised, and the regression learns how much each method counts; the held-out fold is
    then scored. So no text is ever scored by a model that saw its label.
    """
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if not score_table:
        raise DataError("The ensemble needs at least one method's scores.")
    matrix = np.column_stack([np.asarray(v, dtype=np.float64) for v in score_table.values()])
    if matrix.shape[0] != len(labels):
        raise DataError(f"Scores cover {matrix.shape[0]} texts but there are {len(labels)} labels.")
    matrix[~np.isfinite(matrix)] = np.nan
    usable = ~np.isnan(matrix).all(axis=0)
    if not usable.any():
        raise DataError("The ensemble has no usable scores: every method's scores are missing.")
    matrix = matrix[:, usable]
    y, _, _ = _clean(labels, np.zeros(len(labels)))
    k = _folds(y, folds, "ensemble")
    model = make_pipeline(
        SimpleImputer(strategy="median", keep_empty_features=True),
        StandardScaler(),
        LogisticRegression(max_iter=1000, C=1.0),
    )
    splitter = StratifiedKFold(n_splits=k, shuffle=True, random_state=seed)
    probabilities = cross_val_predict(model, matrix, y, cv=splitter, method="predict_proba")[:, 1]
    return evaluate(y, probabilities, seed=seed)
