"""Min-K%++ (Zhang et al. 2024): token log-probs standardised by the model's own next-token distribution."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.engine.capabilities import DISTRIBUTION, TARGET_LOGPROBS
from core.engine.records import TokenRecords
from core.methods.base import AuxiliaryRecords, Method, MethodConfigError
from core.methods.min_k import check_percent, lowest_fraction_mean


def standardised_logprobs(records: TokenRecords) -> np.ndarray:
    """(log p(x_i) − μ_i) / σ_i per token; 0 where the distribution is degenerate (σ = 0).

    Records from a source that returns no full next-token distribution (a served model) hold NaN there:
    refused, never read as a degenerate distribution."""
    if np.isnan(records.mean_logprob).any() or np.isnan(records.std_logprob).any():
        raise MethodConfigError("Min-K%++ needs the full next-token distribution, which these records do not hold.")
    sigma = records.std_logprob
    centred = records.logprobs - records.mean_logprob
    return np.divide(centred, sigma, out=np.zeros_like(centred), where=sigma > 0)


@dataclass(frozen=True)
class MinKPlusPlus(Method):
    k: float = 20.0
    """Percentage of lowest standardised tokens to average."""

    family = "min_k_pp"
    requires = frozenset({TARGET_LOGPROBS, DISTRIBUTION})
    title = "Min-K%++"
    description = (
        "Like Min-K%, but each token is compared with what the model expected at that point: seen text "
        "sits near local maxima of the model's likelihood."
    )

    def __post_init__(self) -> None:
        check_percent(self.k)

    @property
    def key(self) -> str:
        return f"min_k_pp_{self.k:g}"

    @property
    def label(self) -> str:
        return f"Min-{self.k:g}%++"

    def score(self, records: TokenRecords, aux: AuxiliaryRecords | None = None) -> float:
        return lowest_fraction_mean(standardised_logprobs(records), self.k)
