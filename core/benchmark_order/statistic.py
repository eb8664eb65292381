"""The test's numbers: per shard, the canonical order's log-likelihood against its shuffles; over shards, a
one-sided t-test of the differences.

Without the benchmark in its training data a model has no reason to prefer the order the examples were
published in: the canonical order's log-likelihood is one draw among its shuffles', so each shard's
difference (canonical minus the shuffles' mean) has mean zero, and the t-test's false-positive rate is
the chosen level. The exact permutation p-value of each shard (its canonical order's rank among its
orders) is kept beside it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

SIGN_LEVEL = 0.05
"""The level the reachability check asks about: can this many shards reach p < 0.05 at all?"""


@dataclass(frozen=True)
class ShardResult:
    index: int
    start: int
    """0-based index of the shard's first example in the file (its last is ``stop - 1``)."""
    stop: int
    canonical: float
    """Log-likelihood (nats) of the shard's examples in the published order."""
    shuffled: tuple[float, ...]
    exhaustive: bool
    """True: ``shuffled`` holds every other order, so ``p_value`` is exact over all orders."""
    n_tokens: int

    @property
    def n_examples(self) -> int:
        return self.stop - self.start

    @property
    def shuffled_mean(self) -> float:
        return float(np.mean(self.shuffled))

    @property
    def difference(self) -> float:
        """Canonical minus the shuffles' mean: positive = the published order is the likelier."""
        return self.canonical - self.shuffled_mean

    @property
    def p_value(self) -> float:
        """Share of orders (the canonical one included) at least as likely as the canonical one."""
        at_least = sum(1 for value in self.shuffled if value >= self.canonical)
        return (1 + at_least) / (1 + len(self.shuffled))

    def to_dict(self) -> dict[str, Any]:
        return {
            "shard": self.index,
            "first_example": self.start + 1,
            "last_example": self.stop,
            "canonical_logprob": self.canonical,
            "shuffled_mean_logprob": self.shuffled_mean,
            "shuffled_sd_logprob": float(np.std(self.shuffled, ddof=1)) if len(self.shuffled) > 1 else 0.0,
            "difference": self.difference,
            "p_value": self.p_value,
            "n_shuffled": len(self.shuffled),
            "exhaustive": self.exhaustive,
            "n_tokens": self.n_tokens,
        }


def t_test_p_value(differences: Sequence[float]) -> float:
    """One-sided one-sample t-test of mean > 0 (sample standard deviation, n − 1 degrees of freedom)."""
    values = np.asarray(differences, dtype=float)
    if values.size < 2:
        return 1.0
    if float(np.std(values)) == 0.0:  # every shard the same difference: no spread to test against
        return 0.0 if float(values.mean()) > 0 else 1.0
    return float(stats.ttest_1samp(values, 0.0, alternative="greater").pvalue)


def t_interval(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float]:
    """Two-sided t interval (95% by default) of the mean of ``values`` (unbounded with fewer than two)."""
    array = np.asarray(values, dtype=float)
    if array.size < 2:
        return (-math.inf, math.inf)
    half = float(stats.t.ppf(0.5 + confidence / 2, array.size - 1) * array.std(ddof=1) / math.sqrt(array.size))
    return (float(array.mean()) - half, float(array.mean()) + half)


def smallest_sign_p_value(n_shards: int) -> float:
    """The p-value of the best possible outcome, the canonical order likelier in every shard, under a test
    that does not lean on the differences being normal (a sign test): 0.5^n. Below 5 shards it cannot go under
    0.05, so no distribution-free reading of so few shards can find anything."""
    return 0.5**n_shards


def shards_needed(level: float = SIGN_LEVEL) -> int:
    """The fewest shards whose best sign-test outcome goes below ``level``."""
    return math.floor(math.log(level) / math.log(0.5)) + 1


@dataclass(frozen=True)
class OrderTestResult:
    shards: tuple[ShardResult, ...]
    n_examples: int
    permutations: int
    context: int
    stride: int
    seed: int

    @property
    def differences(self) -> list[float]:
        return [shard.difference for shard in self.shards]

    @property
    def p_value(self) -> float:
        return t_test_p_value(self.differences)

    @property
    def t_statistic(self) -> float:
        values = np.asarray(self.differences)
        spread = float(np.std(values, ddof=1)) if values.size > 1 else 0.0
        return float(values.mean() / spread * math.sqrt(values.size)) if spread > 0 else 0.0

    @property
    def mean_difference(self) -> float:
        return float(np.mean(self.differences))

    @property
    def difference_interval(self) -> tuple[float, float]:
        """95% t interval of the mean per-shard difference (nats)."""
        return t_interval(self.differences)

    @property
    def per_example_differences(self) -> list[float]:
        """Each shard's difference divided by its examples: comparable across shard sizes."""
        return [s.difference / s.n_examples for s in self.shards]

    @property
    def canonical_first(self) -> int:
        """Shards whose canonical order is likelier than the mean of its shuffles."""
        return sum(1 for d in self.differences if d > 0)

    @property
    def sign_p_value(self) -> float:
        """One-sided sign test of the same question: P(at least this many shards favour the canonical order)."""
        return float(stats.binomtest(self.canonical_first, len(self.shards), 0.5, alternative="greater").pvalue)

    @property
    def smallest_reachable_p(self) -> float:
        return smallest_sign_p_value(len(self.shards))

    def to_dict(self) -> dict[str, Any]:
        low, high = self.difference_interval
        return {
            "p_value": self.p_value,
            "t_statistic": self.t_statistic,
            "mean_difference": self.mean_difference,
            "mean_difference_ci95": [low, high],
            "shards_favouring_canonical": self.canonical_first,
            "sign_test_p_value": self.sign_p_value,
            "n_shards": len(self.shards),
            "n_examples": self.n_examples,
            "permutations": self.permutations,
            "context": self.context,
            "stride": self.stride,
            "seed": self.seed,
            "shards": [shard.to_dict() for shard in self.shards],
        }
