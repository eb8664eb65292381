"""Probability slope: a straight line fitted to per-token confidence along the passage.

y_i is the token's log-prob (or probability), optionally k-gram normalised:
``y_i = log p(x_i | x_<i) − log p(x_i | start + the k−1 tokens before it)``, i.e. how much the long
context helps beyond local word statistics. The line ``y_i = a + b·i`` is fitted by ordinary least
squares over positions i = 0..n−1 (the same fit as sklearn's ``LinearRegression``); the score is
b, or the research's mean-adjusted b − mean(y) and z-adjusted (b − mean(y)) / std(y), both negated.

Why negated: every LeakLens score is oriented higher = more likely a member. The slope b is a small
per-token number (≈ 0.01), so b − mean(y) is dominated by −mean(y), and a member's curve sits *higher*
(the model is more confident, and with k-gram normalisation the long context helps more). Un-negated,
these variants rank members below non-members: measured with SmolLM2-135M, b − mean(y) gives AUROC
0.35 on BookTection, exactly 1 − AUROC of the loss. Negating keeps the research's quantity and ranking
power and makes its AUROC comparable with every other detector's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from core.engine.scoring import MAX_KGRAM, TokenRecords
from core.methods.base import AuxiliaryRecords, Method, MethodConfigError

Values = Literal["logprob", "prob"]
Adjust = Literal["none", "mean", "z"]


def slope_series(records: TokenRecords, values: Values = "logprob", kgram: int = 0) -> np.ndarray:
    """The y values the line is fitted to."""
    if values == "logprob":
        y = records.logprobs.copy()
        if kgram:
            y -= records.kgram(kgram)
        return y
    y = np.exp(records.logprobs)
    if kgram:
        y -= np.exp(records.kgram(kgram))
    return y


def linear_fit(y: np.ndarray) -> tuple[float, float]:
    """Least-squares intercept a and slope b of y against positions 0..n−1 (b = 0 for fewer than 2 points)."""
    n = len(y)
    if n < 2:
        return (float(y[0]) if n else 0.0), 0.0
    x = np.arange(n, dtype=np.float64)
    x_c = x - x.mean()
    b = float((x_c * (y - y.mean())).sum() / (x_c * x_c).sum())
    return float(y.mean() - b * x.mean()), b


def adjusted_slope(y: np.ndarray, b: float, adjust: Adjust) -> float:
    """The score for slope ``b`` of ``y``: b itself, mean(y) − b, or (mean(y) − b) / std(y) (0 when y is flat).

    The adjusted forms are the research's b − mean(y) negated, so higher = member (see the module docstring).
    """
    if adjust == "none":
        return b
    adjusted = float(y.mean()) - b
    if adjust == "mean":
        return adjusted
    std = float(y.std())
    return adjusted / std if std > 0 else 0.0


@dataclass(frozen=True)
class ProbabilitySlope(Method):
    values: Values = "logprob"
    """Fit the line to token log-probs (default) or to probabilities."""
    kgram: int = 0
    """0 = no normalisation; k in 1..6 subtracts the log-prob given only the k−1 previous tokens."""
    adjust: Adjust = "none"
    """'none' = slope b; 'mean' = mean(y) − b; 'z' = (mean(y) − b) / std(y) (the research's b − mean(y), negated)."""

    family = "slope"
    title = "Probability slope"
    description = "Slope of a line fitted to per-token confidence along the passage (SSRC AI Disclosures method)."

    def __post_init__(self) -> None:
        if self.values not in ("logprob", "prob"):
            raise MethodConfigError(f"values must be 'logprob' or 'prob', got {self.values!r}.")
        if self.adjust not in ("none", "mean", "z"):
            raise MethodConfigError(f"adjust must be 'none', 'mean' or 'z', got {self.adjust!r}.")
        if not isinstance(self.kgram, int) or not 0 <= self.kgram <= MAX_KGRAM:
            raise MethodConfigError(f"kgram must be an integer from 0 (off) to {MAX_KGRAM}, got {self.kgram!r}.")

    @property
    def key(self) -> str:
        parts = ["slope"]
        if self.values == "prob":
            parts.append("prob")
        if self.kgram:
            parts.append(f"{self.kgram}gram")
        if self.adjust != "none":
            parts.append(self.adjust)
        return "_".join(parts)

    @property
    def label(self) -> str:
        bits = []
        if self.values == "prob":
            bits.append("probabilities")
        if self.kgram:
            bits.append(f"{self.kgram}-gram normalised")
        if self.adjust != "none":
            bits.append(f"{self.adjust}-adjusted")
        return "Slope" + (f" ({', '.join(bits)})" if bits else "")

    @property
    def kgram_needed(self) -> int:
        return self.kgram

    def score(self, records: TokenRecords, aux: AuxiliaryRecords | None = None) -> float:
        y = slope_series(records, self.values, self.kgram)
        _, b = linear_fit(y)
        return adjusted_slope(y, b, self.adjust)
