"""How far apart two float32 paths to the same numbers may be: the one rule every path-equality test uses.

Two paths (a server's kernels and ours, a batch and one passage alone, a cache and a recomputation) round
differently, so each per-token log-prob may differ by up to a fixed bound: ``IN_PROCESS`` between two of our own
float32 passes, ``SERVED`` between a server's pass and ours. A mean of per-token values inherits that bound. A sum
of n of them does not: its worst case is n times the bound, but the per-token errors of two paths are rounding
errors with no common sign, so Hoeffding's inequality bounds the sum by ``bound · √(2 n ln(2/δ))`` except with
probability δ (``FAILURE_RATE``, one in a million). The tolerance for a sum is the smaller of the two, plus what
summing in float32 itself may cost: pairwise summation rounds by at most ⌈log₂ n⌉ units of float32's precision of
the sum of the terms' sizes, which for log-probs (all ≤ 0) is the size of their sum.
"""

from __future__ import annotations

import math

IN_PROCESS = 1e-4
"""Per-token log-prob difference between two float32 passes of ours (other batches, padding, windows, caches)."""
SERVED = 1e-3
"""Per-token log-prob difference between a server's float32 pass (its own kernels) and ours."""
FAILURE_RATE = 1e-6
"""The chance the Hoeffding bound allows for a sum to exceed its tolerance with every term inside its bound."""
FLOAT32_UNIT = 2.0**-24
"""float32's unit roundoff: the relative error of one rounding."""


def tolerance(per_token: float, terms: int = 1, total: float = 0.0) -> float:
    """The tolerance for a sum of ``terms`` values each within ``per_token`` whose sum is about ``total`` (one
    term: a value or a mean)."""
    if terms < 1:
        raise ValueError(f"a sum has at least one term, got {terms}")
    if terms == 1:
        return per_token
    hoeffding = per_token * math.sqrt(2 * terms * math.log(2 / FAILURE_RATE))
    rounding = math.ceil(math.log2(terms)) * FLOAT32_UNIT * abs(total)
    return min(per_token * terms, hoeffding) + rounding


def assert_close(got: float, want: float, per_token: float, terms: int = 1, what: str = "") -> None:
    """``got`` within ``tolerance(per_token, terms, want)`` of ``want``, saying both and the tolerance when not."""
    allowed = tolerance(per_token, terms, want)
    label = f"{what}: " if what else ""
    assert abs(got - want) <= allowed, f"{label}{got!r} vs {want!r} differ by {abs(got - want):.3g} > {allowed:.3g}"
