"""Min-K% (Shi et al. 2024): the mean of the least likely k% of token log-probs."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.engine.scoring import TokenRecords
from core.methods.base import AuxiliaryRecords, Method, MethodConfigError


def lowest_fraction_mean(values: np.ndarray, percent: float) -> float:
    """Mean of the ``percent``% smallest values (at least one value)."""
    count = max(1, int(len(values) * percent / 100.0))
    return float(np.sort(values)[:count].mean())


def check_percent(percent: float) -> None:
    if not 0 < percent <= 100:
        raise MethodConfigError(f"k must be a percentage in (0, 100], got {percent}.")


@dataclass(frozen=True)
class MinK(Method):
    k: float = 20.0
    """Percentage of lowest-probability tokens to average."""

    family = "min_k"
    title = "Min-K%"
    description = "Average log-probability of the k% least likely tokens: seen text has few very surprising tokens."

    def __post_init__(self) -> None:
        check_percent(self.k)

    @property
    def key(self) -> str:
        return f"min_k_{self.k:g}"

    @property
    def label(self) -> str:
        return f"Min-{self.k:g}%"

    def score(self, records: TokenRecords, aux: AuxiliaryRecords | None = None) -> float:
        return lowest_fraction_mean(records.logprobs, self.k)
