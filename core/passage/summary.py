"""A plain-language reading of one passage's scores that never claims more than the data allows.

A single score has no threshold: without a calibration set (texts known to be members and non-members)
there is no verdict, only a comparison with reference passages scored by the same model. With a
calibration set, each score is placed as a percentile among the known members and non-members.

Below ``MIN_PASSAGE_TOKENS`` scored tokens a passage is too short to judge at all, and a probability slope
over fewer than ``MIN_SLOPE_TOKENS`` tokens is noise: neither is read as a score (``too_short``,
``slope_reportable``). A passage is never compared with itself: when it is one of the reference examples,
that reference is left out of its comparison.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from core.data.examples import EXAMPLES

MIN_PASSAGE_TOKENS = 20
"""Fewest scored tokens for any reading of a passage (its perplexity, its place among fresh passages).

A token's log-prob spreads by about 3.3 nats around the passage's mean (measured: SmolLM2-135M on 12 of the
shipped fresh passages and the Gettysburg opening, 2.7–3.7), so the mean over n tokens is uncertain by about
3.3/sqrt(n) nats. At 20 tokens that is ±0.74 nats, a factor of two in perplexity: half the gap between a
memorised passage and fresh text (Gettysburg 13 against a median of 60, 1.5 nats), the least a reading must
resolve. Min-20% then averages 4 tokens rather than one. Below it, the headline is "Too short to judge"."""
MIN_SLOPE_TOKENS = 64
"""Fewest tokens for a probability slope to be read as a score.

A least-squares slope over n equally spaced points with residual spread s has standard error
s·sqrt(12 / (n(n² − 1))). With s ≈ 3.3 nats (see ``MIN_PASSAGE_TOKENS``) it is 0.022 per token at 64 tokens,
about the slope of fresh text itself (0.007–0.036 on the same passages); over fewer tokens the slope's sign
is noise (0.063 at 32 tokens; a slope "fitted" through 2 points is any line at all)."""


@dataclass(frozen=True)
class ReferencePoint:
    """A reference passage's perplexity under the current model (e.g. the famous and fresh examples)."""

    label: str
    kind: str
    """'famous' (surely seen) or 'fresh' (cannot have been seen)."""
    perplexity: float
    text: str = ""
    """The reference's own text, so a passage that *is* the reference is not compared with itself; when empty,
    the built-in example of the same kind (``core.data.examples.EXAMPLES``) stands in."""

    @property
    def reference_text(self) -> str:
        if self.text:
            return self.text
        return next((e.text for e in EXAMPLES if e.kind == self.kind), "")


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


def percentile_of(value: float, sample: Sequence[float] | np.ndarray) -> float:
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


def too_short(n_tokens: int | None) -> bool:
    """True when a passage of ``n_tokens`` scored tokens is below ``MIN_PASSAGE_TOKENS``: no reading at all."""
    return n_tokens is not None and n_tokens < MIN_PASSAGE_TOKENS


def slope_reportable(n_tokens: int) -> bool:
    """True when a slope over ``n_tokens`` tokens may be shown as a score (``MIN_SLOPE_TOKENS`` or more)."""
    return n_tokens >= MIN_SLOPE_TOKENS


def reportable_scores(scores: Mapping[str, float], n_tokens: int) -> dict[str, float]:
    """``scores`` without the probability-slope ones when the passage is too short for a slope to mean anything
    (keys starting with ``slope``), and without any when it is too short to judge."""
    if too_short(n_tokens):
        return {}
    if slope_reportable(n_tokens):
        return dict(scores)
    return {key: value for key, value in scores.items() if not key.startswith("slope")}


def too_short_text(n_tokens: int) -> str:
    """The plain sentence for a passage below ``MIN_PASSAGE_TOKENS`` (starts "Too short to judge: ")."""
    return (
        f"Too short to judge: only {n_tokens} token{'' if n_tokens == 1 else 's'} could be scored, and a "
        f"reading needs at least {MIN_PASSAGE_TOKENS}; how predictable a few words are says little about "
        "whether the model has seen the text."
    )


def same_text(a: str, b: str) -> bool:
    """The same passage up to whitespace (a built-in example pasted with other line breaks)."""
    return " ".join(a.split()) == " ".join(b.split())


def honest_summary(
    perplexity: float,
    references: Sequence[ReferencePoint],
    model: str,
    *,
    text: str | None = None,
    n_tokens: int | None = None,
) -> str:
    """Markdown: no verdict, the passage's perplexity next to each reference's, and which it sits nearer.

    ``text`` (the passage) leaves out a reference that is the passage itself; ``n_tokens`` (its scored
    tokens) below ``MIN_PASSAGE_TOKENS`` turns the summary into "Too short to judge".
    """
    if n_tokens is not None and too_short(n_tokens):
        return (
            f"**{too_short_text(n_tokens)}** Its perplexity under `{model}` is "
            f"{format_perplexity(perplexity)}, which on so few tokens is no basis for comparison."
        )
    itself = [r for r in references if text is not None and same_text(r.reference_text, text)]
    references = [r for r in references if r not in itself]
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
    if itself:
        lines.append(f"This passage is the {itself[0].label} itself, so it is not compared with itself.")
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
