"""The bootstrap every interval in LeakLens uses: one seed, one resample count, one percentile rule.

Resampling is vectorised (all resamples drawn as one index matrix) and seeded, so the same inputs
always give the same interval and two quantities resampled with the same seed and sizes see the same
draws (which is what makes a difference of two bootstrapped statistics a paired bootstrap).
"""

from __future__ import annotations

import numpy as np

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 0
CI_LEVEL = 0.95


def resample_indices(rng: np.random.Generator, n: int, n_resamples: int = DEFAULT_RESAMPLES) -> np.ndarray:
    """(n_resamples, n) indices drawn with replacement from ``range(n)``."""
    if n < 1:
        raise ValueError("Cannot resample an empty sample.")
    if n_resamples < 1:
        raise ValueError("n_resamples must be at least 1.")
    return rng.integers(0, n, size=(n_resamples, n))


def percentile_interval(values: np.ndarray, level: float = CI_LEVEL) -> tuple[float, float]:
    """The central ``level`` percentile interval of bootstrapped values."""
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}.")
    tail = (1.0 - level) / 2.0
    lo, hi = np.quantile(np.asarray(values, dtype=float), [tail, 1.0 - tail])
    return float(lo), float(hi)
