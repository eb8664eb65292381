"""What one inspection holds: each passage's own analysis and, once judged, its place among the freshly written
passages, its verdict, and the stored run that keeps it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.passage.inspection import DEFAULT_MAX_TOKENS, InspectedPassage
from core.passage.placement import PassagePlacement
from core.passage.summary import ReferencePoint
from core.passage.verdict import PassageVerdict


@dataclass(frozen=True)
class InspectResult:
    """One inspection: each passage's own analysis and, once judged, its place among fresh passages and verdict."""

    model: str
    passages: tuple[InspectedPassage, ...]
    complete: bool
    """False for the fast first view: no k-gram columns and no k-gram scores yet."""
    placements: tuple[PassagePlacement | None, ...] = ()
    """Each passage among the freshly written calibration passages of similar length (empty when unavailable)."""
    texts: tuple[str, ...] = ()
    """The passages as analysed (to name them and to keep a passage from being compared with itself)."""
    placement_error: str = ""
    """Why the passages could not be placed among the fresh passages, when they could not."""
    verdicts: tuple[PassageVerdict, ...] = ()
    """Each passage's placement, continuation and one finding (empty when the fresh passages were unavailable)."""
    judged: bool = True
    """False while the passage's own result is shown and its comparison with fresh passages is still to come."""
    asked: tuple[tuple[str, str], ...] = ()
    """The (name, text) pairs it was asked for; with ``max_tokens``, a front end's cache key."""
    max_tokens: int | None = DEFAULT_MAX_TOKENS
    left_out: tuple[str, ...] = ()
    """Why a requested method was not run on this model (e.g. it needs a reference model)."""
    fresh: dict[str, Any] = field(default_factory=dict)
    """Where the fresh passages' scores came from (``FreshCalibration.describe``), once judged."""
    run_id: str = ""
    """The stored run that keeps this inspection (``core.passage.stored``), once judged."""
    references: tuple[ReferencePoint, ...] = ()
    """The built-in examples' perplexities under the same model, for scale (never part of the verdict): computed
    with the passages, so a view or a stored run shows them with no model at hand."""
    references_note: str = ""
    """Why the built-in examples could not be scored, when they could not."""
