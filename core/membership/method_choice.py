"""The detectors a membership benchmark offers to choose from: the standard set, then the methods that need
more than one pass per text, each labelled with what it needs and the passes it adds (as the run counts them)."""

from __future__ import annotations

from core.methods import default_methods, parse_methods
from core.methods.auxiliary import auxiliary_cost

EXTRA_METHODS: dict[str, tuple[str, str]] = {
    "recall": ("ReCaLL", "non-member prefix"),
    "neighbourhood": ("Neighbourhood comparison", "reworded neighbours"),
    "reference": ("Reference model", "needs a second model"),
}
"""Methods beyond the standard set: key -> (name, what it needs); the pass count comes from ``auxiliary_cost``."""


def with_cost(key: str, name: str, needs: str) -> str:
    """e.g. 'ReCaLL (non-member prefix; +1 pass per text)': the extra passes as the run counts them."""
    passes = auxiliary_cost(parse_methods([key]))
    return f"{name} ({needs}; +{passes} pass{'es' if passes != 1 else ''} per text)"


def method_choices() -> dict[str, str]:
    """Every method on offer, key -> label: the standard set first (its own labels), then ``EXTRA_METHODS``."""
    return {m.key: m.label for m in default_methods()} | {k: with_cost(k, *v) for k, v in EXTRA_METHODS.items()}
