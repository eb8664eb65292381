"""Neighbourhood comparison (Mattern et al. 2023): the passage against slightly reworded copies of itself.

A model that memorised a passage gives it clearly lower loss than near-identical rewordings; for unseen
text the rewordings are about as likely as the original. Score = mean neighbour loss − passage loss
(higher = more likely a member). Neighbours come from ``core.methods.neighbours`` (the target model's own top
alternatives for a seeded random fraction of the words), computed once per method set (``compute_pass``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from core.engine.capabilities import TARGET_LOGPROBS, TOP_ALTERNATIVES
from core.engine.scoring import TokenRecords, score_texts
from core.methods.base import AuxiliaryRecords, Method, MethodConfigError, PassContext, PassStep
from core.methods.neighbours import generate_neighbours


@dataclass(frozen=True)
class Neighbourhood(Method):
    n_neighbours: int = 5
    """Reworded copies per passage (each costs one more forward pass)."""
    fraction: float = 0.15
    """Share of the eligible words replaced in each neighbour (at least one word)."""
    seed: int = 0
    """Seeds which words are replaced; the same seed always gives the same neighbours."""

    family = "neighbourhood"
    requires = frozenset({TARGET_LOGPROBS, TOP_ALTERNATIVES})
    title = "Neighbourhood"
    description = (
        "Mean loss of reworded copies minus the passage's loss: a memorised passage is much more likely "
        "than its near neighbours."
    )
    needs = frozenset({"neighbours"})
    provides = "neighbours"
    pass_title = "neighbour configuration"

    def __post_init__(self) -> None:
        if not isinstance(self.n_neighbours, int) or self.n_neighbours < 1:
            raise MethodConfigError(f"n_neighbours must be a positive integer, got {self.n_neighbours!r}.")
        if not 0 < self.fraction <= 1:
            raise MethodConfigError(f"fraction must be in (0, 1], got {self.fraction!r}.")
        if not isinstance(self.seed, int):
            raise MethodConfigError(f"seed must be an integer, got {self.seed!r}.")

    @property
    def key(self) -> str:
        return f"neighbourhood_n{self.n_neighbours}_f{self.fraction:g}" + (f"_s{self.seed}" if self.seed else "")

    @property
    def label(self) -> str:
        return f"Neighbourhood ({self.n_neighbours} × {self.fraction:.0%} words)"

    def score(self, records: TokenRecords, aux: AuxiliaryRecords | None = None) -> float:
        neighbours: tuple[TokenRecords, ...] = self._require_aux(aux, "neighbours")
        if len(neighbours) != self.n_neighbours:
            raise MethodConfigError(
                f"{self.label} expects {self.n_neighbours} neighbours per passage but got {len(neighbours)}."
            )
        return float(np.mean([n.loss for n in neighbours])) - records.loss

    def pass_cost(self) -> int:
        return 1 + self.n_neighbours  # writing the neighbours, then scoring each

    def compute_pass(self, context: PassContext, step: PassStep) -> list[Any]:
        """``n_neighbours`` reworded copies of each passage, scored under the target model."""
        records, k = context.records, self.n_neighbours
        texts_by_passage = generate_neighbours(
            context.lm,
            records,
            n_neighbours=k,
            fraction=self.fraction,
            seed=self.seed,
            token_budget=context.token_budget,
            progress=step(len(records)),
        )
        flat = [t for group in texts_by_passage for t in group]
        scored = score_texts(
            context.lm, flat, kgram_max=0, token_budget=context.token_budget, progress=step(len(records) * k)
        )
        return [tuple(scored[i * k : (i + 1) * k]) for i in range(len(records))]
