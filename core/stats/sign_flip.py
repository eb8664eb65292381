"""The one-sided sign-flip test of paired differences: is their mean above 0 by more than chance allows?

Under the null each pair's two scores are exchangeable, so each difference is as likely negative as positive:
the p-value is the share of sign patterns whose sum reaches the observed one. Exact up to ``EXACT_FLIPS``
differences that are not 0; beyond, ``SAMPLED_FLIPS`` seeded patterns, counted (k + 1) / (N + 1) so a sampled
p-value is never 0. Zero differences change no pattern and are left out.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.stats.bootstrap import DEFAULT_SEED

EXACT_FLIPS = 16
"""2^16 = 65,536 patterns: enumerated at once."""
SAMPLED_FLIPS = 20_000


def sign_flip_p_value(differences: Sequence[float] | np.ndarray) -> float:
    diffs = np.asarray(differences, dtype=float)
    diffs = diffs[diffs != 0]
    if diffs.size == 0:
        return 1.0
    size = np.abs(diffs)
    observed = diffs.sum() - 1e-9 * size.sum()  # a pattern equal to the observed sum counts as reaching it
    if diffs.size <= EXACT_FLIPS:
        patterns = 1 - 2 * ((np.arange(2**diffs.size)[:, None] >> np.arange(diffs.size)) & 1)
        return float(np.mean(patterns @ size >= observed))
    signs = np.random.default_rng(DEFAULT_SEED).choice((-1.0, 1.0), size=(SAMPLED_FLIPS, diffs.size))
    return float((np.sum(signs @ size >= observed) + 1) / (SAMPLED_FLIPS + 1))
