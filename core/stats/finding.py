"""What a result means, in one sentence a stakeholder can repeat: every test ends in a ``Finding``.

Levels, strongest first: ``strong``, ``moderate``, ``weak`` (evidence of exposure, graded by how far
the interval sits from "no effect"), ``none`` (the data rule out an effect of any useful size),
``inconclusive`` (the interval includes "no effect": more data needed) and ``confounded`` (something
other than the model explains the result, e.g. wording alone separates the sets). The rules live beside
each test (``core.<test>.finding``) and follow its statistics: an interval that includes chance is never
``strong``. No test gives a verdict on fewer items than its stated minimum (one constant per test, in its
``finding.py``): below it the finding is ``inconclusive`` and its headline says how many there are and how
many are needed (``too_few``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Level = Literal["strong", "moderate", "weak", "none", "inconclusive", "confounded"]
LEVELS: tuple[str, ...] = ("strong", "moderate", "weak", "none", "inconclusive", "confounded")
EXPOSURE_LEVELS: tuple[str, ...] = ("strong", "moderate", "weak")
"""Levels that say the model did see (or find easier) the data in question."""


@dataclass(frozen=True)
class Finding:
    """A verdict with the numbers behind it and what it cannot say."""

    level: Level
    headline: str
    """One plain sentence with the key number."""
    evidence: tuple[str, ...] = ()
    """The two or three numbers behind the headline, each as a short phrase."""
    caveats: tuple[str, ...] = field(default_factory=tuple)
    """What the result does not show, and conditions under which it misleads."""

    def __post_init__(self) -> None:
        if self.level not in LEVELS:
            raise ValueError(f"Unknown finding level {self.level!r}; use one of {', '.join(LEVELS)}.")
        if not self.headline.strip():
            raise ValueError("A finding needs a headline.")

    def to_dict(self) -> dict[str, Any]:
        return {"level": self.level, "headline": self.headline, "evidence": list(self.evidence),
                "caveats": list(self.caveats)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        return cls(level=data["level"], headline=data["headline"], evidence=tuple(data.get("evidence", ())),
                   caveats=tuple(data.get("caveats", ())))


def texts_needed(n: int, estimate: float, interval: tuple[float, float], null: float) -> int | None:
    """Roughly how many samples would make an effect of this size exclude ``null`` from a 95% interval.

    The half-width of a bootstrap interval shrinks like 1/sqrt(n); solve for the n at which it equals the
    distance between the estimate and ``null``. None when the estimate sits on the null itself.
    """
    distance = abs(estimate - null)
    half_width = (interval[1] - interval[0]) / 2
    if distance <= 1e-9 or half_width <= 0 or n <= 0:
        return None
    return max(n + 1, int(n * (half_width / distance) ** 2 + 0.999))


def too_few(have: str, needed: str) -> str:
    """The headline of a finding below its test's minimum size: what there is, and what a verdict needs.

    ``too_few("1 member text and 1 non-member text", "5 of each")`` -> "Inconclusive: only 1 member text and 1
    non-member text; at least 5 of each are needed for a verdict."
    """
    return f"Inconclusive: only {have}; at least {needed} are needed for a verdict."


def count(n: int, noun: str) -> str:
    """``1 question``, ``3 questions``: a count with its noun in the right number (for nouns whose plural
    adds an s)."""
    return f"{n} {noun}{'' if n == 1 else 's'}"
