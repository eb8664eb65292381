"""What the Inspect page computes: named passages analysed in one batch, and reference perplexities.

Kept out of the page so it is testable without Streamlit and reusable from other front ends.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

from core.data.examples import EXAMPLES
from core.data.text import decode_utf8
from core.engine.models import model_fact
from core.engine.progress import ProgressCallback
from core.engine.scoring import MAX_KGRAM, ScoringModel, TruncationWarning
from core.errors import InputTextError
from core.methods import Method, default_methods
from core.methods.analysis import PassageAnalysis, analyse_passages
from core.methods.loss import Loss
from core.passage.summary import ReferencePoint

DEFAULT_MAX_TOKENS = 1024
"""Tokens scored per passage on the page: keeps a pasted book chapter responsive on a CPU."""


@dataclass(frozen=True)
class InspectedPassage:
    name: str
    analysis: PassageAnalysis

    @property
    def n_dropped(self) -> int:
        return self.analysis.records.n_dropped

    @property
    def n_dropped_text(self) -> str:
        """The dropped-token count as a reader should take it: "about" when only estimated (a huge passage)."""
        records = self.analysis.records
        return f"{'' if records.n_dropped_exact else 'about '}{records.n_dropped:,}"


def inspect_passages(
    lm: ScoringModel,
    passages: Sequence[tuple[str, str]],
    *,
    methods: Sequence[Method] | None = None,
    max_tokens: int | None = DEFAULT_MAX_TOKENS,
    with_kgrams: bool = True,
    kgram_columns: bool = True,
    progress: ProgressCallback | None = None,
    reference_lm: ScoringModel | None = None,
) -> list[InspectedPassage]:
    """Analyse ``(name, text)`` pairs in one batch.

    with_kgrams=True keeps all k-gram columns (so the page's k-gram toggle needs no new pass); False skips
    the k-gram windows (several times the main pass; docs/benchmarks.md, Scoring engine) and every method
    that needs them, for a first fast view. ``kgram_columns=False`` computes only the k-gram windows the
    methods need (a command line shows no k-gram toggle).
    Empty passages raise ``InputTextError`` naming the passage; truncation is reported through each
    result's ``n_dropped`` instead of a warning.
    """
    if not passages:
        raise InputTextError("Nothing to analyse: paste a passage, pick an example or upload a .txt file.")
    for name, text in passages:
        if not isinstance(text, str) or not text.strip():
            raise InputTextError(
                f"{name} is empty: paste a passage, pick a built-in example or upload a .txt file first."
            )
    chosen = list(methods) if methods is not None else default_methods()
    if not with_kgrams:
        chosen = [m for m in chosen if m.kgram_needed == 0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TruncationWarning)
        analyses = analyse_passages(
            lm,
            [text for _, text in passages],
            chosen,
            kgram_max=(MAX_KGRAM if kgram_columns else None) if with_kgrams else 0,
            max_tokens=max_tokens,
            progress=progress,
            reference_lm=reference_lm,
        )
    return [InspectedPassage(name, a) for (name, _), a in zip(passages, analyses)]


def reference_points(lm: ScoringModel) -> list[ReferencePoint]:
    """Perplexity of each built-in example under ``lm`` (one cheap batched pass, no k-grams), once per model
    source: every passage inspected with the same model sets itself beside the same two numbers."""
    return list(model_fact(lm, "reference points", _score_references))


def _score_references(lm: ScoringModel) -> tuple[ReferencePoint, ...]:
    analyses = analyse_passages(lm, [e.text for e in EXAMPLES], [Loss()], kgram_max=0)
    labels = {"famous": "famous example (Gettysburg Address)", "fresh": "freshly written example"}
    return tuple(
        ReferencePoint(label=labels.get(e.kind, e.title), kind=e.kind, perplexity=a.perplexity)
        for e, a in zip(EXAMPLES, analyses)
    )


def decode_text_upload(data: bytes, filename: str) -> str:
    """Text of an uploaded .txt file; a clear ``InputTextError`` for binary or non-UTF-8 files."""
    if b"\x00" in data[:4096]:
        raise InputTextError(f"{filename} looks like a binary file; upload plain UTF-8 text (.txt).")
    text = decode_utf8(data, filename, "Save it as UTF-8 and upload it again.")
    if not text.strip():
        raise InputTextError(f"{filename} is empty; nothing to analyse.")
    return text
