"""Solution losses: the one model pass the loss-delta test needs, and its per-model result type.

Solution/prompt boundary: prompt + solution is tokenized once and the boundary is found from character
offsets, because tokenizing the prompt alone can end on a different token (a trailing newline merges
with the solution's indentation). A token that straddles the boundary (starts in the prompt, ends in
the solution) counts as a solution token: it cannot be predicted without guessing solution text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.data.problems import CodeProblem
from core.engine.models import LoadedModel
from core.engine.progress import ProgressCallback
from core.engine.scoring import DEFAULT_TOKEN_BUDGET, ScoringModel, encode_texts, score_texts, target_logprobs
from core.errors import DataError


@dataclass(frozen=True)
class ProblemLoss:
    """One problem's loss on its solution tokens."""

    task_id: str
    loss: float
    """Mean −log p over the solution tokens (nats)."""
    n_tokens: int
    """Solution tokens scored (the boundary-straddling token included)."""


def first_solution_token(offsets: np.ndarray, boundary: int) -> int:
    """Index of the first token whose character span ends after ``boundary`` (= ``len(prompt)``).

    Every later token belongs to the solution too, so odd zero-width spans cannot split it.
    Returns ``len(offsets)`` when no token reaches past the boundary.
    """
    ends = np.asarray(offsets).reshape(-1, 2)[:, 1]
    after = np.flatnonzero(ends > boundary)
    return int(after[0]) if after.size else int(ends.shape[0])


def solution_losses(
    lm: ScoringModel,
    problems: Sequence[CodeProblem],
    *,
    token_budget: int = DEFAULT_TOKEN_BUDGET,
    progress: ProgressCallback | None = None,
) -> list[ProblemLoss]:
    """Loss on each problem's solution tokens, conditioned on its prompt.

    One batched pass that computes logits only at the solution's positions and keeps only each actual
    token's log-prob (``target_logprobs``): the loss needs nothing else.
    """
    if not problems:
        raise DataError("No problems to score.")
    encoded = encode_texts(lm, [p.prompt + p.solution for p in problems])
    starts = [first_solution_token(np.asarray(e.offsets), len(p.prompt)) for p, e in zip(problems, encoded)]
    logprobs = target_logprobs(lm, encoded, starts, token_budget=token_budget, progress=progress)
    return [_problem_loss(lm, p, lp) for p, lp in zip(problems, logprobs)]


def solution_losses_full_pass(
    lm: LoadedModel, problems: Sequence[CodeProblem], *, token_budget: int = DEFAULT_TOKEN_BUDGET
) -> list[ProblemLoss]:
    """The slow reference path: the full scoring pass (every token's distribution statistics), then the
    solution's log-probs. Kept as the reference ``solution_losses`` must equal (tests, ``bench/delta.py``)."""
    if not problems:
        raise DataError("No problems to score.")
    records = score_texts(lm, [p.prompt + p.solution for p in problems], kgram_max=0, token_budget=token_budget)
    return [
        _problem_loss(lm, p, rec.logprobs[first_solution_token(rec.offsets, len(p.prompt)) :])
        for p, rec in zip(problems, records)
    ]


def _problem_loss(lm: ScoringModel, problem: CodeProblem, solution_lp: np.ndarray) -> ProblemLoss:
    if solution_lp.size == 0:
        raise DataError(
            f"Problem {problem.task_id}: its prompt fills the model's context of {lm.max_context} tokens, so "
            "no solution token could be scored. Use a model with a longer context or drop this problem."
        )
    return ProblemLoss(problem.task_id, float(-solution_lp.mean()), int(solution_lp.size))


@dataclass(frozen=True)
class ModelLosses:
    """One model's per-problem solution losses on the test and the reference set."""

    model: str
    test: tuple[ProblemLoss, ...]
    ref: tuple[ProblemLoss, ...]

    @property
    def test_losses(self) -> np.ndarray:
        return np.array([p.loss for p in self.test])

    @property
    def ref_losses(self) -> np.ndarray:
        return np.array([p.loss for p in self.ref])
