"""A passage's one verdict from everything measured about it: its place among freshly written passages
and, where it is long enough, whether the model continues it word for word (the extraction test).

The Inspect page, ``python -m core inspect`` and the passage report all read verdicts from here, so the
three say the same thing about the same passage.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from core.engine.model_source import ScoringModel
from core.engine.progress import ProgressCallback
from core.engine.records import TokenRecords, scored_text
from core.methods.extraction import Continuation, extract, too_short_for_extraction_note
from core.passage.calibration import FreshCalibration
from core.passage.extraction import ExtractionView, extraction_view
from core.passage.extraction_finding import ExtractionReading, passage_finding, read_extraction
from core.passage.placement import PassagePlacement, has_yardstick, place_passage
from core.passage.text_form import guess_group
from core.stats.finding import Finding

NO_FRESH_CONTINUATIONS = (
    "The fresh passages' continuations were not measured for this model, so the extraction test is not read."
)


@dataclass(frozen=True)
class PassageVerdict:
    placement: PassagePlacement
    finding: Finding
    continuation: Continuation | None = None
    view: ExtractionView | None = None
    reading: ExtractionReading | None = None
    extraction_note: str = ""
    """Why there is no extraction reading (too short, not asked for, or no fresh continuations to compare)."""

    def extraction_dict(self) -> dict[str, Any] | None:
        if self.continuation is None or self.view is None:
            return None
        c, v = self.continuation, self.view
        return {
            "fraction": c.fraction,
            "prompt_tokens": c.prefix_tokens,
            "continuation_tokens": c.length,
            "leading": c.leading,
            "longest_run": c.longest_run,
            "prompt_words": v.prompt_words,
            "leading_words": v.leading_words,
            "prompt": v.prompt,
            "true_continuation": "".join(v.truth_pieces),
            "model_continuation": "".join(v.generated_pieces),
            "matched": list(c.matched),
            "against_fresh": None if self.reading is None else self.reading.to_dict(),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "finding": self.finding.to_dict(),
            "placement": self.placement.to_dict(),
            "extraction": self.extraction_dict(),
            "extraction_note": self.extraction_note or None,
        }


def judge_passage(
    scores: Mapping[str, float],
    records: TokenRecords,
    calibration: FreshCalibration,
    continuation: Continuation | None = None,
    view: ExtractionView | None = None,
    *,
    extraction_note: str = "",
    vector: np.ndarray | None = None,
) -> PassageVerdict:
    """Placement, extraction reading and the one finding; each test allows for the other when both can read
    (a placement without a yardstick leaves the extraction test alone). ``vector``: the passage's embedding, so
    it is read against its nearest fresh passages in kind (``passage_vectors``)."""
    group = guess_group(scored_text(records))
    reading = read_extraction(continuation, calibration, group=group) if continuation is not None else None
    if continuation is not None and reading is None:
        extraction_note = (
            "The fresh passages' continuations were not measured for this model, so the extraction test is not read."
        )
    placement = place_passage(
        scores, records.n_tokens, calibration, tests=2 if reading else 1, group=group, vector=vector
    )
    if reading is not None and has_yardstick(placement):
        reading = replace(reading, tests=2)
    finding = passage_finding(placement, reading, view)
    if extraction_note:
        finding = replace(finding, caveats=(*finding.caveats, extraction_note))
    return PassageVerdict(placement, finding, continuation, view, reading, extraction_note)


def judge_passages(
    lm: ScoringModel,
    passages: Sequence[tuple[Mapping[str, float], TokenRecords]],
    calibration: FreshCalibration,
    *,
    extraction: bool = True,
    progress: ProgressCallback | None = None,
) -> list[PassageVerdict]:
    """Every passage's verdict; with ``extraction`` the model continues each passage's first half (one
    batched generation for all of them)."""
    records = [rec for _, rec in passages]
    vectors = passage_vectors(calibration, [scored_text(rec) for rec in records])
    continuations: list[list[Continuation | None]] = (
        extract(lm, records, progress=progress) if extraction else [[None] for _ in records]
    )
    verdicts = []
    for (scores, rec), measured, vector in zip(passages, continuations, vectors, strict=True):
        continuation = measured[0]
        if continuation is None:
            note = too_short_for_extraction_note(rec.n_tokens) if extraction else ""
            verdicts.append(judge_passage(scores, rec, calibration, extraction_note=note, vector=vector))
        else:
            view = extraction_view(lm, rec, continuation)
            verdicts.append(judge_passage(scores, rec, calibration, continuation, view, vector=vector))
    return verdicts


def passage_vectors(calibration: FreshCalibration, texts: Sequence[str]) -> list[np.ndarray | None]:
    """Each passage's embedding when the calibration can read passages by kind (it has a fresh set), else None:
    one batched pass of the bundled sentence-embedding model."""
    if (calibration.embeddings is None and not calibration.set_passages) or not texts:
        return [None] * len(texts)
    from core.passage.kind import embed

    return list(embed(texts))
