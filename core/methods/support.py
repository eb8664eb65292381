"""Which detectors a model source can compute: the rest are left out with the reason, never approximated."""

from __future__ import annotations

from collections.abc import Sequence

from core.engine.capabilities import split_supported
from core.engine.handle import ModelHandle
from core.engine.model_source import ScoringModel
from core.errors import LeakLensError
from core.methods.base import Method


def supported_methods(source: ModelHandle | ScoringModel, methods: Sequence[Method]) -> tuple[list[Method], list[str]]:
    """(the methods ``source`` can compute, a note for each left out). A model loaded here computes every
    method; a served one returns no full next-token distribution, so Min-K%++ is left out there."""
    kept, notes = split_supported(list(methods), source.capabilities, source.source_label)
    if not kept:
        raise LeakLensError(" ".join(notes) + " No detector is left to run.")
    return kept, notes
