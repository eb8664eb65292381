"""A share of items that pass a check, read against the share chance allows: the exact (Clopper–Pearson) 95%
interval, the one-sided binomial p-value, and the level they support.

Two tests count items this way: the questions whose published option order is the likeliest of all their orders
(chance: one over the number of orders), and the benchmark items the model continues word for word further than
freshly written text (chance: at most the per-item level of that comparison). The levels:
- the interval's lower end above chance -> evidence, graded by how far above: at least ``STRONG_EXCESS`` above
  chance ``strong``, at least ``MODERATE_EXCESS`` ``moderate``, else ``weak``;
- the interval's upper end within ``NONE_MARGIN`` of chance -> ``none``: the data rule out an excess of a useful
  size;
- otherwise ``inconclusive``, with about how many more items would settle it (``items_needed``: the fewest at
  which the same share would read otherwise).
"""

from __future__ import annotations

from dataclasses import dataclass

from scipy import stats

from core.stats.finding import Level

STRONG_EXCESS = 0.25
MODERATE_EXCESS = 0.10
NONE_MARGIN = 0.05
"""No-effect margin: ``none`` needs the whole interval below chance + 0.05 (one item in twenty beyond chance)."""


@dataclass(frozen=True)
class ShareReading:
    """``hits`` of ``n`` items passed a check that an unexposed model passes with probability at most ``chance``."""

    hits: int
    n: int
    chance: float

    def __post_init__(self) -> None:
        if self.n < 1 or not 0 <= self.hits <= self.n:
            raise ValueError(f"A share needs 0 <= hits <= n and n >= 1, got {self.hits} of {self.n}.")
        if not 0 < self.chance < 1:
            raise ValueError(f"The chance rate must lie strictly between 0 and 1, got {self.chance}.")

    @property
    def share(self) -> float:
        return self.hits / self.n

    @property
    def interval(self) -> tuple[float, float]:
        """Exact (Clopper–Pearson) 95% interval of the share."""
        ci = stats.binomtest(self.hits, self.n, self.chance).proportion_ci(confidence_level=0.95, method="exact")
        return float(ci.low), float(ci.high)

    @property
    def p_value(self) -> float:
        """One-sided: the chance of at least ``hits`` of ``n`` when each item passes with probability ``chance``."""
        return float(stats.binomtest(self.hits, self.n, self.chance, alternative="greater").pvalue)

    @property
    def level(self) -> Level:
        lo, hi = self.interval
        if lo > self.chance:
            excess = lo - self.chance
            return "strong" if excess >= STRONG_EXCESS else "moderate" if excess >= MODERATE_EXCESS else "weak"
        if hi <= self.chance + NONE_MARGIN:
            return "none"
        return "inconclusive"

    def items_needed(self, limit: int = 100) -> int | None:
        """About how many items would settle an inconclusive share: the fewest at which the same share's interval
        clears chance or fits inside the margin (searched up to ``limit`` times today's count; None beyond)."""
        for n in range(self.n + 1, self.n * limit + 1):
            settled = ShareReading(round(self.share * n), n, self.chance).level != "inconclusive"
            if settled:
                return n
        return None
