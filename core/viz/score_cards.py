"""Which detector scores a page shows first, and a one-line description for each card.

The standard set holds a dozen probability-slope variants that share one class description; shown as a
dozen identical cards they bury the handful of headline detectors. Headline cards come first; every
slope variant gets a line saying exactly what it fits, so each card still explains itself.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.methods import Method
from core.methods.slope import ProbabilitySlope


def is_slope_variant(method: Method) -> bool:
    """A probability-slope method other than the plain slope of the log-prob curve."""
    return isinstance(method, ProbabilitySlope) and (
        method.values != "logprob" or method.kgram != 0 or method.adjust != "none"
    )


def split_headline(methods: Sequence[Method]) -> tuple[list[Method], list[Method]]:
    """(headline methods, slope variants), each keeping the given order."""
    headline = [m for m in methods if not is_slope_variant(m)]
    variants = [m for m in methods if is_slope_variant(m)]
    return headline, variants


def card_description(method: Method) -> str:
    """The card's one-line description; slope variants say what their line is fitted to."""
    if not isinstance(method, ProbabilitySlope):
        return method.description
    series = "log-probability" if method.values == "logprob" else "probability"
    text = f"Slope of the straight line through each token's {series}"
    if method.kgram:
        context = "no context at all" if method.kgram == 1 else f"only the {method.kgram - 1} tokens before it"
        text += f", minus its {series} given {context} (how much the long context helps)"
    if method.adjust == "mean":
        text += ", subtracted from the curve's mean (higher = a more confident curve)"
    elif method.adjust == "z":
        text += "; the curve's mean minus the slope, divided by its standard deviation"
    return text + "."
