"""Option-order test: is the benchmark's own option order more likely than every other order?

For each question the full text (question and options, laid out as for the probes) is scored in all
orders of its options. The question text is the same in every order, so only the options decide. A
model that never saw the benchmark has no reason to prefer the published order: its rank is uniform
over 1..n!, its percentile averages 0.5. Consistently top-ranked original orders mean leakage.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from core.data.questions import MCQuestion, PromptLayout
from core.engine.generation import sequence_logprobs_shared_prefix
from core.engine.model_source import ScoringModel, encode
from core.engine.progress import ProgressCallback
from core.errors import InputTextError
from core.mcq.shuffle import all_orders, apply_permutation

MAX_OPTIONS_FOR_ORDERS = 5
"""5 options already mean 120 orders per question; 6 would mean 720."""
EXACT_PERCENTILE_CELLS = 50_000
"""Largest n·(m − 1) for which the mean percentile's p-value is computed exactly (well under a second);
beyond it the normal approximation is accurate to far below the precision anyone reads a p-value at."""


def exact_percentile_p_value(percentiles: Sequence[float], n_orders: int) -> float:
    """P(sum of n null percentiles ≥ the observed sum), each null percentile uniform on k/(m−1), k = 0..m−1.

    Sums are counted in half-steps of 1/(m−1) because a tie counts half; the null distribution of the
    sum is the n-fold convolution of the uniform distribution on 0..m−1 (in probabilities, no overflow).
    """
    m = n_orders
    observed = round(sum(2 * (m - 1) * p for p in percentiles))  # in half-steps
    step = np.full(m, 1.0 / m)
    null = np.ones(1)
    for _ in percentiles:
        null = np.convolve(null, step)
    # null[k] = P(sum of steps = k); a sum of k steps is 2k half-steps.
    first = math.ceil(observed / 2)
    return float(min(1.0, null[first:].sum())) if first < null.size else 0.0


@dataclass(frozen=True)
class QuestionOrders:
    index: int
    logprobs: tuple[float, ...]
    """Total log-probability of the text in each order of ``all_orders`` (the original first)."""

    @property
    def original(self) -> float:
        return self.logprobs[0]

    @property
    def rank(self) -> int:
        """1 = the original order is the most likely (ties count against it)."""
        return 1 + sum(1 for lp in self.logprobs[1:] if lp >= self.original)

    @property
    def percentile(self) -> float:
        """Share of the other orders less likely than the original (ties count half): 1 = most likely."""
        others = self.logprobs[1:]
        below = sum(1.0 if lp < self.original else 0.5 if lp == self.original else 0.0 for lp in others)
        return below / len(others)


@dataclass(frozen=True)
class PermutationResult:
    questions: tuple[QuestionOrders, ...]
    n_orders: int

    @property
    def mean_percentile(self) -> float:
        return sum(q.percentile for q in self.questions) / len(self.questions)

    @property
    def top1_fraction(self) -> float:
        return sum(q.rank == 1 for q in self.questions) / len(self.questions)

    @property
    def p_value_percentile(self) -> float:
        """One-sided p-value of the mean percentile under "no preference": exact, or normal when n is large.

        Without a preference the rank is uniform on 1..m (m orders), so a question's percentile
        (m − rank)/(m − 1) is uniform on {0, 1/(m−1), ..., 1}. The normal approximation (mean 1/2,
        variance (m + 1) / (12 (m − 1) n)) overstates significance for few questions or options (3
        two-option questions all in their original order: 0.042 instead of the exact 0.125), so the
        exact distribution of the sum is used whenever it is small enough to enumerate.
        """
        m, n = self.n_orders, len(self.questions)
        if n * (m - 1) <= EXACT_PERCENTILE_CELLS:
            return exact_percentile_p_value([q.percentile for q in self.questions], m)
        sd = math.sqrt((m + 1) / (12 * (m - 1)) / n)
        return float(stats.norm.sf((self.mean_percentile - 0.5) / sd))

    @property
    def p_value_top1(self) -> float:
        """One-sided binomial p-value of the number of questions whose original order ranks first."""
        hits = sum(q.rank == 1 for q in self.questions)
        return float(stats.binomtest(hits, len(self.questions), 1 / self.n_orders, alternative="greater").pvalue)

    def to_dict(self) -> dict[str, object]:
        return {
            "n_orders": self.n_orders,
            "mean_percentile": self.mean_percentile,
            "top1_fraction": self.top1_fraction,
            "p_value_percentile": self.p_value_percentile,
            "p_value_top1": self.p_value_top1,
            "ranks": [q.rank for q in self.questions],
        }


def order_texts(question: MCQuestion, layout: PromptLayout) -> list[str]:
    """The question rendered in every order of its options, the original first."""
    if len(question.options) > MAX_OPTIONS_FOR_ORDERS:
        raise InputTextError(
            f"The order test scores every order of the options; {len(question.options)} options would need "
            f"{math.factorial(len(question.options))} passes per question (at most {MAX_OPTIONS_FOR_ORDERS} options)."
        )
    return [layout.render(apply_permutation(question, order))[0] for order in all_orders(len(question.options))]


def permutation_test(
    lm: ScoringModel,
    questions: Sequence[MCQuestion],
    layout: PromptLayout | None = None,
    *,
    progress: ProgressCallback | None = None,
) -> PermutationResult:
    """Score every order of every question (batched per question) and rank the original orders."""
    layout = layout or PromptLayout()
    if not questions:
        raise InputTextError("No questions to test.")
    per_question = [order_texts(q, layout) for q in questions]
    n_orders = len(per_question[0])
    if any(len(t) != n_orders for t in per_question):
        raise InputTextError("Every question needs the same number of options for the order test.")
    flat = [[lm.start_token_id, *encode(lm, t)] for ts in per_question for t in ts]
    too_long = [i // n_orders for i, ids in enumerate(flat) if len(ids) > lm.max_context]
    if too_long:
        raise InputTextError(
            f"Question {questions[too_long[0]].index} does not fit the model's context of {lm.max_context} tokens."
        )
    scored = []
    for i, question in enumerate(questions):
        # One question's orders share its text up to the first option: that part runs once per question.
        orders = flat[i * n_orders : (i + 1) * n_orders]
        scored.append(QuestionOrders(index=question.index, logprobs=tuple(sequence_logprobs_shared_prefix(lm, orders))))
        if progress is not None:
            progress((i + 1) * n_orders, len(flat))
    return PermutationResult(questions=tuple(scored), n_orders=n_orders)
