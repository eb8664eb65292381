"""Passage analysis: score passages once, then run every method on the same records."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.engine.progress import ProgressCallback
from core.engine.scoring import MAX_KGRAM, ScoringModel, TokenRecords, score_texts
from core.methods import Method, default_methods, score_all
from core.methods.auxiliary import compute_auxiliary, needed_passes
from core.methods.support import supported_methods


@dataclass(frozen=True)
class PassageAnalysis:
    """One passage's token records and every requested method's score."""

    records: TokenRecords
    scores: dict[str, float]

    @property
    def perplexity(self) -> float:
        return self.records.perplexity


def kgram_needed(methods: Sequence[Method]) -> int:
    return max((m.kgram_needed for m in methods), default=0)


def analyse_passages(
    lm: ScoringModel,
    texts: Sequence[str],
    methods: Sequence[Method] | None = None,
    *,
    kgram_max: int | None = None,
    max_tokens: int | None = None,
    progress: ProgressCallback | None = None,
    reference_lm: ScoringModel | None = None,
) -> list[PassageAnalysis]:
    """Score ``texts`` in one batched pass and apply ``methods`` (default: the standard set).

    kgram_max defaults to what the methods need; pass ``MAX_KGRAM`` to keep all k-gram columns for display.
    Methods that compare against an extra pass (reference model, neighbours, ReCaLL prefix) get exactly
    the passes they need, computed once for all texts; ``reference_lm`` is the reference model a reference
    method compares with (``core.methods.reference.reference_source``).
    """
    # What the source cannot compute is left out, never approximated (callers show the notes).
    methods, _ = supported_methods(lm, list(methods) if methods is not None else default_methods())
    needed = kgram_needed(methods)
    kgram = needed if kgram_max is None else max(min(kgram_max, MAX_KGRAM), needed)
    records = score_texts(lm, texts, kgram_max=kgram, max_tokens=max_tokens, progress=progress)
    extra = (
        compute_auxiliary(lm, texts, methods, records, reference_lm=reference_lm)
        if needed_passes(methods)
        else [None] * len(records)
    )
    return [PassageAnalysis(records=r, scores=score_all(methods, r, aux)) for r, aux in zip(records, extra)]
