"""What a result means, in one sentence a stakeholder can repeat: every test ends in a ``Finding``.

Levels, strongest first: ``strong``, ``moderate``, ``weak`` (evidence of exposure, graded by how far
the interval sits from "no effect"), ``none`` (the interval lies inside the test's stated no-effect margin:
the data rule out an effect of any useful size), ``inconclusive`` (the interval crosses that margin, or the
data are too few or too short to judge: more data needed) and ``confounded`` (something other than the
model explains the result, e.g. wording alone separates the sets). The rules live beside each test
(``core.<test>.finding``) and follow its statistics: an interval that includes chance is never ``strong``,
and each test names its no-effect margin as a constant with the reason for its size. No test gives a
verdict on fewer items than its stated minimum (one constant per test, in its ``finding.py``): below it the
finding is ``inconclusive`` and its headline says how many there are and how many are needed (``too_few``).

Wording: the ``headline`` says in plain words what the result means for the listener, with plain numbers
only ("4 of 200 items"); the statistics behind it (AUROC, intervals, Δ, p-values) go in ``numbers``, one
line that pages and reports show under the headline with every term explained on hover
(``core.viz.glossary``).
"""

from __future__ import annotations

from collections.abc import Sequence
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
    """One plain sentence: what the result means for the listener, no jargon, plain numbers only."""
    evidence: tuple[str, ...] = ()
    """The two or three numbers behind the headline, each as a short phrase."""
    caveats: tuple[str, ...] = field(default_factory=tuple)
    """What the result does not show, and conditions under which it misleads."""
    numbers: str = ""
    """One line with the key statistics ("AUROC 0.93 (95% interval 0.85–0.99) · blind baseline 0.55 · 40
    texts"), shown under the headline with its terms glossed; empty when there is nothing to measure."""

    def __post_init__(self) -> None:
        if self.level not in LEVELS:
            raise ValueError(f"Unknown finding level {self.level!r}; use one of {', '.join(LEVELS)}.")
        if not self.headline.strip():
            raise ValueError("A finding needs a headline.")

    def to_dict(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "headline": self.headline,
            "numbers": self.numbers,
            "evidence": list(self.evidence),
            "caveats": list(self.caveats),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        """The finding of ``to_dict``; dicts stored before ``numbers`` existed read back with it empty."""
        return cls(
            level=data["level"],
            headline=data["headline"],
            evidence=tuple(data.get("evidence", ())),
            caveats=tuple(data.get("caveats", ())),
            numbers=data.get("numbers") or "",
        )


def texts_needed(n: int, estimate: float, interval: tuple[float, float], null: float | Sequence[float]) -> int | None:
    """Roughly how many samples would settle the question: a 95% interval that excludes ``null``.

    The half-width of a bootstrap interval shrinks like 1/sqrt(n); solve for the n at which it equals the
    distance between the estimate and ``null``. ``null`` may be several boundaries, any one of which settles
    the question once the interval lies on one side of it (e.g. 0 for "an effect" and the edge of the
    no-effect margin for "no useful effect"): the fewest samples over them. None when the estimate sits on
    every boundary itself.
    """
    nulls = (null,) if isinstance(null, int | float) else tuple(null)
    half_width = (interval[1] - interval[0]) / 2
    distance = max((abs(estimate - b) for b in nulls), default=0.0)
    if distance <= 1e-9 or half_width <= 0 or n <= 0:
        return None
    return max(n + 1, int(n * (half_width / distance) ** 2 + 0.999))


def more_would_settle(needed: int | None, have: int, noun: str) -> str:
    """``about 12 more questions would settle it`` (``needed`` from ``texts_needed`` or the like; None: not known
    how many, ``more questions would settle it``)."""
    return f"about {needed - have} more {noun} would settle it" if needed else f"more {noun} would settle it"


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


def interval(lo: float, hi: float, fmt: str = ".2f") -> str:
    """``95% interval 0.85–0.99`` (``+`` formats join with "to", since a dash reads as a minus sign)."""
    if "+" in fmt:
        return f"95% interval {lo:{fmt}} to {hi:{fmt}}"
    return f"95% interval {lo:{fmt}}–{hi:{fmt}}"
