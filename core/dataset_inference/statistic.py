"""Dataset inference: is a *set* of texts scored as more "seen" than texts the model surely never saw?

Per-text membership scores are weak when members and non-members come from the same distribution, but
many weak signals over hundreds of texts add up (Maini et al., NeurIPS 2024, "LLM Dataset Inference").
The test, on a suspect set (texts claimed to be used) and a validation set (same distribution, known
unused), with every detector's score as a feature:

1. split both sets in two halves A and B at random (seeded; each set split on its own);
2. on A, standardise the features and fit an L2-regularised logistic regression "suspect vs validation";
3. on B, score every text with it and run a one-sided Welch t-test "suspect scores higher";
4. repeat over ``n_splits`` splits and combine their p-values as **twice the median**.

Why twice the median: the split p-values reuse the same texts, so they are dependent and neither their
median nor a Fisher combination is a valid p-value. Twice the median (capped at 1) is valid under any
dependence (Vovk & Wang, "Combining p-values via averaging", Biometrika 2020; DiCiccio, DiCiccio &
Romano 2020, "Exact tests via multiple data splitting"); the price is some power, which more texts buy back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
from scipy import stats
from sklearn.linear_model import LogisticRegression

from core.errors import DataError

DEFAULT_SPLITS = 10
DEFAULT_SEED = 0
MIN_PER_SET = 6
"""Each half must hold at least 3 texts of each set for the t-test to mean anything."""
MAX_MISSING_SHARE = 0.1
"""A feature missing (NaN) for more than this share of texts is left out rather than imputed."""


@dataclass(frozen=True)
class SplitOutcome:
    """One A/B split: the held-out halves' combined scores and their t-test."""

    p_value: float
    t_statistic: float
    effect_size: float
    """Cohen's d of the held-out combined scores, suspect minus validation (pooled SD)."""
    weights: np.ndarray
    """Logistic-regression coefficients on standardised features (per SD of the feature on A)."""
    suspect_scores: np.ndarray
    validation_scores: np.ndarray


@dataclass(frozen=True)
class InferenceResult:
    """The combined test over all splits."""

    p_value: float
    """Twice the median split p-value, capped at 1: valid however dependent the splits are."""
    split_p_values: tuple[float, ...]
    effect_size: float
    """Median over splits of Cohen's d on the held-out halves."""
    weights: dict[str, float]
    """Mean standardised coefficient per feature over the splits (positive: higher means "suspect")."""
    n_suspect: int
    n_validation: int
    features: tuple[str, ...]
    left_out_features: tuple[str, ...] = ()
    """Features not used: constant, or missing for too many texts."""
    n_texts_dropped: int = 0
    """Texts left out because a used feature was missing for them."""
    first_split: SplitOutcome | None = None
    """The first split's held-out scores, for the distribution chart."""
    seed: int = DEFAULT_SEED

    @property
    def median_p(self) -> float:
        return float(np.median(self.split_p_values))

    def top_features(self, k: int = 5) -> list[tuple[str, float]]:
        """The features carrying most weight, largest absolute weight first."""
        return sorted(self.weights.items(), key=lambda kv: -abs(kv[1]))[:k]

    def to_dict(self) -> dict[str, object]:
        return {
            "p_value": self.p_value,
            "median_split_p_value": self.median_p,
            "split_p_values": list(self.split_p_values),
            "combination": "twice the median split p-value (valid under dependence)",
            "effect_size": self.effect_size,
            "n_suspect": self.n_suspect,
            "n_validation": self.n_validation,
            "n_splits": len(self.split_p_values),
            "seed": self.seed,
            "weights": dict(self.weights),
            "left_out_features": list(self.left_out_features),
            "n_texts_dropped": self.n_texts_dropped,
        }


def usable_features(features: np.ndarray, names: Sequence[str]) -> tuple[np.ndarray, list[str], list[str], np.ndarray]:
    """(matrix of usable columns, their names, left-out names, mask of texts kept).

    A column missing for more than ``MAX_MISSING_SHARE`` of texts or constant is left out; texts missing
    a kept column are dropped (and counted by the caller), never filled with made-up values.
    """
    x = np.asarray(features, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != len(names):
        raise DataError(f"Expected one column per feature name ({len(names)}), got shape {x.shape}.")
    missing = ~np.isfinite(x)
    keep_cols = [j for j in range(x.shape[1]) if missing[:, j].mean() <= MAX_MISSING_SHARE]
    # ``missing`` is 2-D (checked above), so reducing along axis 1 gives an array, never a scalar.
    rows = cast(np.ndarray, ~missing[:, keep_cols].any(axis=1)) if keep_cols else np.ones(x.shape[0], bool)
    keep_cols = [j for j in keep_cols if np.ptp(x[rows, j]) > 0]
    if not keep_cols:
        raise DataError("No detector score varies across these texts; dataset inference has nothing to combine.")
    kept = [names[j] for j in keep_cols]
    return x[:, keep_cols], kept, [n for n in names if n not in kept], rows


def one_split(x: np.ndarray, is_suspect: np.ndarray, rng: np.random.Generator) -> SplitOutcome:
    """Fit on a random half of each set, test on the other half."""
    in_a = np.zeros(is_suspect.size, dtype=bool)
    for group in (np.flatnonzero(is_suspect), np.flatnonzero(~is_suspect)):
        chosen = rng.permutation(group)[: group.size // 2]
        in_a[chosen] = True
    mean, sd = x[in_a].mean(axis=0), x[in_a].std(axis=0)
    sd[sd == 0] = 1.0
    model = LogisticRegression(C=1.0, max_iter=1000)
    model.fit((x[in_a] - mean) / sd, is_suspect[in_a].astype(int))
    held = ~in_a
    combined = model.decision_function((x[held] - mean) / sd)
    suspect, validation = combined[is_suspect[held]], combined[~is_suspect[held]]
    test = stats.ttest_ind(suspect, validation, equal_var=False, alternative="greater")
    p = float(test.pvalue) if np.isfinite(test.pvalue) else 1.0
    return SplitOutcome(
        p, float(test.statistic), cohens_d(suspect, validation), model.coef_[0].copy(), suspect, validation
    )


def cohens_d(a: np.ndarray, b: np.ndarray) -> float:
    """Standardised mean difference (a − b) / pooled SD; 0 when both samples are constant."""
    pooled = np.sqrt(((a.size - 1) * a.var(ddof=1) + (b.size - 1) * b.var(ddof=1)) / (a.size + b.size - 2))
    return float((a.mean() - b.mean()) / pooled) if pooled > 0 else 0.0


def dataset_inference(
    features: np.ndarray,
    is_suspect: Sequence[bool],
    names: Sequence[str],
    *,
    n_splits: int = DEFAULT_SPLITS,
    seed: int = DEFAULT_SEED,
) -> InferenceResult:
    """The combined test over ``n_splits`` seeded A/B splits (see the module docstring)."""
    if n_splits < 1:
        raise DataError(f"The number of splits must be at least 1, got {n_splits}.")
    suspect_mask = np.asarray(is_suspect, dtype=bool)
    x, kept, left_out, rows = usable_features(features, list(names))
    x, suspect_mask = x[rows], suspect_mask[rows]
    n_suspect, n_validation = int(suspect_mask.sum()), int((~suspect_mask).sum())
    if min(n_suspect, n_validation) < MIN_PER_SET:
        raise DataError(
            f"Dataset inference needs at least {MIN_PER_SET} texts in each set (suspect "
            f"{n_suspect}, validation {n_validation} with every feature present)."
        )
    rng = np.random.default_rng(seed)
    outcomes = [one_split(x, suspect_mask, rng) for _ in range(n_splits)]
    p_values = tuple(o.p_value for o in outcomes)
    weights = np.mean([o.weights for o in outcomes], axis=0)
    return InferenceResult(
        p_value=min(1.0, 2.0 * float(np.median(p_values))),
        split_p_values=p_values,
        effect_size=float(np.median([o.effect_size for o in outcomes])),
        weights={name: float(w) for name, w in zip(kept, weights, strict=True)},
        n_suspect=n_suspect,
        n_validation=n_validation,
        features=tuple(kept),
        left_out_features=tuple(left_out),
        n_texts_dropped=int((~rows).sum()),
        first_split=outcomes[0],
        seed=seed,
    )


MAX_TEXTS_NEEDED = 100_000


def split_power(effect_size: float, n_per_set: int, alpha: float = 0.05) -> float:
    """Chance that the combined test reaches ``alpha`` with ``n_per_set`` texts per set, for this held-out effect.

    The combined p-value is below ``alpha`` when the median split reaches ``alpha / 2``; a split tests
    half of each set, so this is the power of a one-sided two-sample t-test with ``n_per_set // 2`` texts
    per group at level ``alpha / 2``, the effect being Cohen's d of the combined score on held-out texts.
    """
    m = n_per_set // 2
    if m < 2:
        return 0.0
    df = 2 * m - 2
    critical = stats.t.isf(alpha / 2, df)
    return float(stats.nct.sf(critical, df, effect_size * np.sqrt(m / 2)))


def texts_for_power(effect_size: float, *, alpha: float = 0.05, target: float = 0.8) -> int | None:
    """Texts per set for a ``target`` chance of p < ``alpha`` at this effect; None when no size would do.

    The effect is the one measured on the user's own held-out texts, so this answers "how many texts would
    a difference like this one need?". A classifier fitted on more texts only gets better, so it errs high.
    """
    if not effect_size > 0:
        return None
    low, high = 4, 8
    while split_power(effect_size, high, alpha) < target:
        if high >= MAX_TEXTS_NEEDED:
            return None
        low, high = high, high * 2
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if split_power(effect_size, mid, alpha) < target else (low, mid)
    return high
