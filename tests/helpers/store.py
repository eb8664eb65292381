"""Facts about stored runs that only tests ask for."""

from __future__ import annotations

from core.store.results import RunInfo


def n_remaining(run: RunInfo) -> int | None:
    """Samples a run still has to store; None when its total is unknown."""
    return None if run.n_total is None else max(run.n_total - run.n_done, 0)
