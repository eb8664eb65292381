"""Option shuffling: the mitigation a fair benchmark release applies, and the permutations the
order test compares."""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

from core.data.questions import LETTERS, MCQuestion, with_options


def apply_permutation(question: MCQuestion, order: Sequence[int]) -> MCQuestion:
    """The question with option ``order[i]`` moved to position ``i``; the answer letters follow."""
    n = len(question.options)
    if sorted(order) != list(range(n)):
        raise ValueError(f"{list(order)} is not a permutation of {n} options.")
    options = [question.options[i] for i in order]
    answer = None
    if question.answer is not None:
        new_position = {old: new for new, old in enumerate(order)}
        answer = "".join(sorted(LETTERS[new_position[LETTERS.index(a)]] for a in question.answer))
    return with_options(question, options, answer)


def shuffle_order(n_options: int, seed: int, question_index: int) -> tuple[int, ...]:
    """A permutation drawn from the non-identity orders, fixed by (seed, question index).

    The identity is excluded so that every question really changes: a shuffled release that keeps
    some questions intact would leave exactly those questions as leaky as before.
    """
    rng = random.Random(f"leaklens-shuffle:{seed}:{question_index}")
    identity = tuple(range(n_options))
    while True:
        order = list(identity)
        rng.shuffle(order)
        if tuple(order) != identity:
            return tuple(order)


def shuffle_questions(questions: Sequence[MCQuestion], seed: int = 0) -> list[MCQuestion]:
    """Every question with its options shuffled deterministically (same seed -> same benchmark)."""
    return [apply_permutation(q, shuffle_order(len(q.options), seed, q.index)) for q in questions]


def all_orders(n_options: int) -> list[tuple[int, ...]]:
    """Every order of ``n_options`` options, the original (identity) first."""
    return list(itertools.permutations(range(n_options)))
