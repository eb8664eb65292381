"""A plain-language reading of one passage's scores that never claims more than the data allows.

A single score has no threshold: without a calibration set (texts known to be members and non-members)
there is no verdict, only a comparison with reference passages scored by the same model. With a
calibration set, each score is placed as a percentile among the known members and non-members.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ReferencePoint:
    """A reference passage's perplexity under the current model (e.g. the famous and fresh examples)."""

    label: str
    kind: str
    """'famous' (surely seen) or 'fresh' (cannot have been seen)."""
    perplexity: float


@dataclass(frozen=True)
class Calibration:
    """Scores of texts with known labels, per method key; e.g. a benchmark run on the same model."""

    name: str
    members: Mapping[str, Sequence[float]]
    non_members: Mapping[str, Sequence[float]]


@dataclass(frozen=True)
class CalibrationPercentile:
    """Share (0..100) of known members / non-members whose score is at or below this passage's."""

    method_key: str
    above_members: float
    above_non_members: float


def percentile_of(value: float, sample: Sequence[float]) -> float:
    """Percentage of ``sample`` that is ≤ ``value`` (ties count half), NaNs ignored."""
    data = np.asarray(sample, dtype=np.float64)
    data = data[~np.isnan(data)]
    if data.size == 0:
        raise ValueError("The calibration sample is empty.")
    below = np.count_nonzero(data < value)
    ties = np.count_nonzero(data == value)
    return float(100.0 * (below + 0.5 * ties) / data.size)


def calibration_percentiles(scores: Mapping[str, float], calibration: Calibration) -> list[CalibrationPercentile]:
    """Percentiles for every method that the calibration set covers on both sides."""
    rows = []
    for key, value in scores.items():
        members, non_members = calibration.members.get(key), calibration.non_members.get(key)
        if members is None or non_members is None or len(members) == 0 or len(non_members) == 0:
            continue
        rows.append(CalibrationPercentile(key, percentile_of(value, members), percentile_of(value, non_members)))
    return rows


def format_perplexity(value: float) -> str:
    if not math.isfinite(value):
        return "∞"
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def honest_summary(perplexity: float, references: Sequence[ReferencePoint], model: str) -> str:
    """Markdown: no verdict, the passage's perplexity next to each reference's, and which it sits nearer."""
    lines = [
        f"**No verdict without calibration.** A single score cannot say *seen* or *unseen* on its own: "
        f"it depends on the model, the text's style and length. Lower perplexity means `{model}` found the "
        "text more predictable."
    ]
    comparison = f"This passage's perplexity is **{format_perplexity(perplexity)}**"
    if references:
        parts = [f"the {r.label} scores **{format_perplexity(r.perplexity)}**" for r in references]
        comparison += "; " + "; ".join(parts)
    lines.append(comparison + ".")
    nearest = nearest_reference(perplexity, references)
    if references_indistinct(references):
        lines.append(
            f"`{model}` scores the famous and the fresh example almost alike, so it barely tells seen from "
            "unseen text here and this comparison says little. Try a trained model, or add a calibration set."
        )
    elif nearest is not None and len(references) > 1:
        lines.append(
            f"On a log scale it sits nearer the {nearest.label}. That is a hint to investigate, not proof: "
            "add a calibration set (texts known to be in and out of training) for percentiles."
        )
    return "\n\n".join(lines)


INDISTINCT_RATIO = 1.5
"""References whose perplexities differ by less than this factor cannot anchor a comparison."""


def references_indistinct(references: Sequence[ReferencePoint]) -> bool:
    """True when the famous and the fresh reference are within ``INDISTINCT_RATIO`` of each other."""
    famous = [r.perplexity for r in references if r.kind == "famous"]
    fresh = [r.perplexity for r in references if r.kind == "fresh"]
    if not famous or not fresh:
        return False
    low, high = sorted((min(famous), max(fresh)))
    return low > 0 and math.isfinite(high) and high / low < INDISTINCT_RATIO


def nearest_reference(perplexity: float, references: Sequence[ReferencePoint]) -> ReferencePoint | None:
    """The reference whose perplexity is closest on a log scale (perplexities span orders of magnitude)."""
    finite = [r for r in references if r.perplexity > 0 and math.isfinite(r.perplexity)]
    if not finite or not perplexity > 0 or not math.isfinite(perplexity):
        return None
    return min(finite, key=lambda r: abs(math.log(perplexity) - math.log(r.perplexity)))
