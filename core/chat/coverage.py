"""N-gram coverage (Hallinan et al., COLM 2025): how much of a passage's true rest a model's own continuations
reproduce, word for word.

The passage is cut at a word boundary into a prompt (its first ``PROMPT_SHARE`` of words) and its rest. The
model is asked, in a chat turn, to continue the prompt exactly; ``SAMPLES`` continuations are drawn at
``TEMPERATURE``. A continuation's coverage is the share of its words that lie inside some run of ``N`` words
that also occurs in the true rest; the passage's score is the largest coverage over its continuations (the
paper's max aggregation). A model that read the passage continues it with long runs of the real text; fresh
text is reproduced only in stock phrases, which is why the score is judged against freshly written passages.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.engine.chat import ChatAnswer, ChatRequest, answer_problem

KEY = "ngram_coverage"
N = 4
"""Words in a run that counts as reproduced (the paper's minimum n-gram, 3 to 5 in its sweeps)."""
PROMPT_SHARE = 0.5
SAMPLES = 5
TEMPERATURE = 1.0
SEED = 0
PROMPT = (
    "Continue the following text exactly as it continues in its original source. Reply with the continuation "
    "only, no commentary.\n\n{prompt}"
)
"""The user turn, verbatim; ``{prompt}`` is the passage's first part."""
_WORD = re.compile(r"\w+|[^\w\s]")
"""A word is a run of letters and digits; each punctuation mark is a word of its own."""


def words(text: str) -> list[str]:
    return _WORD.findall(text)


def coverage(continuation: str, truth: str, n: int = N) -> float:
    """The share of ``continuation``'s words inside a run of ``n`` words that also occurs in ``truth``
    (0 for a continuation shorter than ``n`` words)."""
    said, true = words(continuation), words(truth)
    if len(said) < n:
        return 0.0
    runs = {tuple(true[i : i + n]) for i in range(len(true) - n + 1)}
    covered = [False] * len(said)
    for i in range(len(said) - n + 1):
        if tuple(said[i : i + n]) in runs:
            covered[i : i + n] = [True] * n
    return sum(covered) / len(said)


@dataclass(frozen=True)
class Split:
    """A passage cut for the test: what the model is shown and what it should reproduce."""

    prompt: str
    rest: str


def split_passage(text: str, share: float = PROMPT_SHARE) -> Split:
    """Cut ``text`` after the word that ends its first ``share`` of words, keeping every character."""
    spans = [m.span() for m in re.finditer(r"\S+", text)]
    if len(spans) < 2:
        raise ValueError("a passage needs at least two words to be cut into a prompt and its rest")
    cut = spans[max(1, min(len(spans) - 1, round(len(spans) * share))) - 1][1]
    return Split(prompt=text[:cut], rest=text[cut:])


def coverage_request(split: Split, *, samples: int = SAMPLES, temperature: float = TEMPERATURE) -> ChatRequest:
    """The chat turn that asks for the rest, with room for about as many tokens as the rest has words twice."""
    budget = max(16, 2 * len(words(split.rest)))
    return ChatRequest(
        messages=(("user", PROMPT.format(prompt=split.prompt)),),
        max_tokens=budget,
        temperature=temperature,
        samples=samples,
        seed=SEED,
    )


@dataclass(frozen=True)
class CoverageScore:
    """One passage's score and what it rests on."""

    score: float | None
    """Largest coverage over the readable continuations; None when none was readable."""
    coverages: tuple[float | None, ...]
    """Each continuation's coverage, None where the answer was not read (``problems`` says why)."""
    problems: tuple[str | None, ...]


def score_answers(split: Split, answers: Sequence[ChatAnswer], n: int = N) -> CoverageScore:
    """Coverage of each readable continuation (a refusal or an empty answer is not one) and their maximum."""
    problems = tuple(answer_problem(a) for a in answers)
    coverages = tuple(None if p else coverage(a.text, split.rest, n) for a, p in zip(answers, problems))
    readable = [c for c in coverages if c is not None]
    return CoverageScore(score=max(readable) if readable else None, coverages=coverages, problems=problems)
