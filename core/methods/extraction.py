"""Extraction: given the first part of a passage, does the model write the rest word for word?

The most direct evidence of memorisation a reader needs no statistics for ("given the first 30 words, the
model wrote the next 50 exactly"). The passage is tokenized once, as the scoring pass does; the first
``fraction`` of its tokens (at least ``MIN_PREFIX_TOKENS``) after the start token is the prompt, and the
model's greedy continuation (``core.engine.generation``: batched with the KV cache in this process, or the
server's own generation) is compared token by token with the passage's true next tokens, at most
``MAX_CONTINUATION`` of them. Measured per continuation: how many leading tokens match exactly (the score),
the longest run of consecutive matching positions, and which positions match (for highlighting).

As a detector (``Extraction``) the score is the leading matched tokens: a memorised passage is continued
verbatim, new text almost never past a few tokens. It needs only generation, so it runs on any served model
that generates. A passage too short to split scores NaN (left out of the AUROC, and said).

Comparing ids position by position is exact for any script: a CJK character split over two byte-level
tokens matches only when both tokens do.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.engine.capabilities import GENERATION
from core.engine.generation import greedy_generate
from core.engine.model_source import ScoringModel
from core.engine.progress import ProgressCallback
from core.engine.records import TokenRecords
from core.errors import InputTextError
from core.methods.base import AuxiliaryRecords, Method, MethodConfigError, PassContext, PassStep

DEFAULT_FRACTION = 0.5
"""The prompt is the first half of the passage."""
MAX_CONTINUATION = 64
"""Tokens compared after the prompt: enough for a sentence or two of verbatim text, cheap on a CPU."""
MIN_PREFIX_TOKENS = 4
"""Fewer tokens of prompt than this say too little about which text to continue."""
MIN_CONTINUATION = 4
"""Fewer tokens to continue than this cannot show a verbatim run worth reporting."""
EXTRACTION_KEY = "extraction"
"""The default detector's key: leading matched tokens at the default prompt fraction."""


@dataclass(frozen=True)
class Continuation:
    """One greedy continuation of a passage's first part, compared with the rest of the passage."""

    fraction: float
    prefix_tokens: int
    """Passage tokens given as the prompt (after the start token)."""
    truth_ids: tuple[int, ...]
    generated_ids: tuple[int, ...]

    @property
    def matched(self) -> tuple[bool, ...]:
        """Per continuation position: did the model write the passage's token there?"""
        return tuple(a == b for a, b in zip(self.generated_ids, self.truth_ids, strict=True))

    @property
    def leading(self) -> int:
        """Tokens matched exactly from the start of the continuation: the extraction score."""
        return leading_matches(self.generated_ids, self.truth_ids)

    @property
    def longest_run(self) -> int:
        """Longest stretch of consecutive positions where the model wrote the passage's tokens."""
        return longest_matching_run(self.generated_ids, self.truth_ids)

    @property
    def length(self) -> int:
        return len(self.truth_ids)


def leading_matches(generated: Sequence[int], truth: Sequence[int]) -> int:
    count = 0
    for a, b in zip(generated, truth):
        if a != b:
            break
        count += 1
    return count


def longest_matching_run(generated: Sequence[int], truth: Sequence[int]) -> int:
    best = run = 0
    for a, b in zip(generated, truth):
        run = run + 1 if a == b else 0
        best = max(best, run)
    return best


def extraction_score(continuation: Continuation | None) -> float:
    """The detector's score: leading matched tokens, NaN for a passage too short to split."""
    return math.nan if continuation is None else float(continuation.leading)


def continuation_digest(ids: Sequence[int]) -> str:
    """A short fingerprint of a continuation's token ids: two runs continued a passage identically or not."""
    return hashlib.sha256(",".join(str(int(i)) for i in ids).encode()).hexdigest()[:16]


def extraction_plan(n_tokens: int, fraction: float = DEFAULT_FRACTION) -> tuple[int, int] | None:
    """(prompt tokens, continuation tokens) for a passage of ``n_tokens``; None when it is too short."""
    if not 0 < fraction < 1:
        raise InputTextError(f"The prompt fraction must be between 0 and 1, got {fraction!r}.")
    prefix = max(MIN_PREFIX_TOKENS, round(n_tokens * fraction))
    length = min(n_tokens - prefix, MAX_CONTINUATION)
    if length < MIN_CONTINUATION:
        return None
    return prefix, length


def too_short_for_extraction_note(n_tokens: int) -> str:
    return (
        f"Too short for the extraction test: {n_tokens} tokens leave no useful prompt and continuation "
        f"(it needs at least {MIN_PREFIX_TOKENS + MIN_CONTINUATION})."
    )


def extract(
    lm: ScoringModel,
    records: Sequence[TokenRecords],
    fractions: Sequence[float] = (DEFAULT_FRACTION,),
    *,
    progress: ProgressCallback | None = None,
) -> list[list[Continuation | None]]:
    """Per passage, per fraction: the continuation compared with the passage (None: the passage is too short).

    ``records`` are the passages under ``lm`` (``core.engine.scoring.score_texts``): the same ids, so the
    prompt is exactly the scored passage's start. All continuations go to the model in one batched call.
    """
    planned: list[tuple[int, int, int, int]] = []  # passage, fraction index, prefix, length
    for p, rec in enumerate(records):
        for f, fraction in enumerate(fractions):
            plan = extraction_plan(rec.n_tokens, fraction)
            if plan is not None:
                planned.append((p, f, *plan))
    results: list[list[Continuation | None]] = [[None] * len(fractions) for _ in records]
    if not planned:
        return results
    prompts = [[lm.start_token_id, *records[p].token_ids[:prefix].tolist()] for p, _, prefix, _ in planned]
    generations = greedy_generate(lm, prompts, [length for *_, length in planned], progress=progress)
    for (p, f, prefix, length), generation in zip(planned, generations, strict=True):
        truth = tuple(int(t) for t in records[p].token_ids[prefix : prefix + length])
        generated = tuple(generation.token_ids[:length])
        if len(generated) < length:  # the context ran out: pad with a token that never matches
            generated += (-1,) * (length - len(generated))
        results[p][f] = Continuation(fractions[f], prefix, truth, generated)
    return results


@dataclass(frozen=True)
class Extraction(Method):
    fraction: float = 0.5
    """Share of the passage's tokens given as the prompt."""

    family = "extraction"
    requires = frozenset({GENERATION})
    title = "Extraction"
    description = "Tokens of the passage's second half the model writes word for word when given the first half."
    needs = frozenset({"extraction"})
    provides = "extraction"
    pass_title = "prompt fraction"

    def __post_init__(self) -> None:
        if not isinstance(self.fraction, int | float) or not 0 < self.fraction < 1:
            raise MethodConfigError(f"fraction must be between 0 and 1, got {self.fraction!r}.")

    @property
    def key(self) -> str:
        return EXTRACTION_KEY if self.fraction == DEFAULT_FRACTION else f"extraction_f{self.fraction:g}"

    @property
    def label(self) -> str:
        return "Extraction (verbatim tokens)" if self.fraction == 0.5 else f"Extraction (prompt {self.fraction:.0%})"

    def score(self, records: TokenRecords, aux: AuxiliaryRecords | None = None) -> float:
        return float(self._require_aux(aux, "extraction"))

    def pass_cost(self) -> int:
        return 1

    def compute_pass(self, context: PassContext, step: PassStep) -> list[Any]:
        """Every passage's continuation in one batched generation; the leading matched tokens (NaN: too short)."""
        measured = extract(context.lm, context.records, (self.fraction,), progress=step(len(context.records)))
        return [extraction_score(e) for (e,) in measured]
