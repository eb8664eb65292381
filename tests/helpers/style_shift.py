"""A fine-tune whose Δ² is a style shift, not leakage: the ground truth of the loss-delta ``confounded`` rule.

The tiny random model is fine-tuned on half of a code problem set until it fits that half closely; the other
half (never trained on) then gets no easier, while English prose, a style it never saw, gets far harder. So
Δ² of the untrained half against a prose reference falls well below zero with no leak at all. Shared by the
unit test (tests/loss_delta) and the browser test of the Loss delta page.
"""

from __future__ import annotations

from dataclasses import dataclass

from transformers import PreTrainedModel, PreTrainedTokenizerBase

from core.data.problems import CodeProblem, ProblemSet, builtin_problems
from core.engine.bundled import tiny_random_model
from core.passage.calibration import FRESH_PASSAGES_PATH, load_fresh_passages
from tests.helpers.fine_tune import fine_tune

HALF = 5
"""Problems per half, and in the prose reference: the loss-delta finding's minimum (``MIN_PROBLEMS``)."""
STEPS, LR = 30, 0.1
"""Training that fits the trained half closely (measured on the tiny model: the untrained half's loss moves
by about +1.2 with an interval reaching both sides of 0, the prose's by about +9.7)."""
PROSE_CHARS = 240


@dataclass(frozen=True)
class StyleShift:
    """The fine-tuned model and the two sets to compare with its untuned base."""

    tuned: PreTrainedModel
    untrained: ProblemSet
    prose: ProblemSet


def prose_reference(n: int = HALF) -> ProblemSet:
    """English prose in the problem format: a passage's first sentence as the prompt, what follows as the solution."""
    passages = [p for p in load_fresh_passages(FRESH_PASSAGES_PATH) if p.form == "technical"][:n]
    problems = []
    for passage in passages:
        first, rest = passage.text.split(". ", 1)
        problems.append(CodeProblem(f"prose/{passage.id}", first + ". ", rest[:PROSE_CHARS]))
    return ProblemSet("technical prose", tuple(problems), True)


def style_shift(tokenizer: PreTrainedTokenizerBase, start_id: int) -> StyleShift:
    """Fine-tune ``tiny_random_model(seed=0)`` (the bundled ``tiny-random``) on every other one of the shortest
    built-in problems; the rest are the untrained half."""
    shortest = sorted(builtin_problems().problems, key=lambda p: len(p.prompt) + len(p.solution))[: 2 * HALF]
    trained, untrained = shortest[0::2], ProblemSet("untrained half", tuple(shortest[1::2]), True)
    tuned = tiny_random_model(tokenizer, seed=0)
    fine_tune(tuned, tokenizer, start_id, [p.prompt + p.solution for p in trained], steps=STEPS, lr=LR)
    return StyleShift(tuned, untrained, prose_reference())
