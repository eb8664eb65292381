"""Loss (mean negative log-likelihood): models assign seen text lower loss."""

from __future__ import annotations

from dataclasses import dataclass

from core.engine.scoring import TokenRecords
from core.methods.base import AuxiliaryRecords, Method


@dataclass(frozen=True)
class Loss(Method):
    family = "loss"
    title = "Log-likelihood (−loss)"
    description = "Average log-probability per token (the negated loss): text the model has seen surprises it less."

    def score(self, records: TokenRecords, aux: AuxiliaryRecords | None = None) -> float:
        return float(records.logprobs.mean())
