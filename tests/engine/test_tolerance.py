"""The path-equality tolerance (tests/helpers/tolerance.py) on a sum of 1,000 float32 log-probs: never exceeded
when every term is inside its per-token bound, and not more than ten times the largest difference that happens."""

from __future__ import annotations

import numpy as np
import pytest

from core.engine.scoring import score_texts
from tests.helpers.tolerance import IN_PROCESS, SERVED, tolerance

TERMS = 1_000
TRIALS = 2_000


@pytest.fixture(scope="module")
def log_probs(tiny_lm) -> np.ndarray:
    """1,000 real per-token log-probs (float64) of a long passage, the terms of the sums below."""
    text = " ".join(f"The {w} cart number {i} went to market." for i, w in enumerate(["red", "blue", "old"] * 40))
    (records,) = score_texts(tiny_lm, [text], kgram_max=0)
    assert records.n_tokens >= TERMS
    return records.logprobs[:TERMS].astype(np.float64)


@pytest.mark.parametrize("per_token", [IN_PROCESS, SERVED])
def test_a_sum_of_a_thousand_is_neither_tighter_than_the_arithmetic_nor_ten_times_looser(log_probs, per_token):
    """Two float32 paths: one sums the float32 terms; the other moves every term anywhere inside its per-token
    bound (uniformly, the widest spread the bound allows), rounds to float32 and sums in the other order."""
    rng = np.random.default_rng(0)
    first = float(log_probs.astype(np.float32).sum(dtype=np.float32))
    moved = log_probs + rng.uniform(-per_token, per_token, size=(TRIALS, TERMS))
    second = moved[:, ::-1].astype(np.float32).sum(axis=1, dtype=np.float32).astype(np.float64)
    worst = float(np.max(np.abs(second - first)))
    allowed = tolerance(per_token, TERMS, first)
    assert worst <= allowed  # not tighter than what the arithmetic does
    assert allowed <= 10 * worst  # and not ten times looser than needed
    assert allowed < per_token * TERMS / 4  # far inside the worst case of every error with one sign


def test_one_term_or_a_mean_keeps_the_per_token_bound_and_no_sum_has_zero_terms():
    assert tolerance(SERVED) == SERVED
    assert tolerance(IN_PROCESS, 2, -20.0) <= 2 * IN_PROCESS + 2 * 2.0**-24 * 20
    with pytest.raises(ValueError, match="at least one term"):
        tolerance(SERVED, 0)
