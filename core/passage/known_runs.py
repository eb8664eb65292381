"""A finished membership benchmark run as a second yardstick for an inspected passage: its known members and
non-members, scored by the same model and methods, that the passage's scores can be set against (a choice the
user makes on the Inspect page; the verdict itself always reads the freshly written passages)."""

from __future__ import annotations

import math

from core.errors import LeakLensError
from core.membership.benchmark import KIND, SCORE_DEFINITIONS
from core.passage.summary import Calibration
from core.store.results import ResultStore, RunInfo
from core.store.stored_run import finished_run


def calibration_runs(store: ResultStore, model: str | None = None) -> list[RunInfo]:
    """Finished membership runs usable as calibration sets: ``model``'s runs first, then newest first."""
    runs = [r for r in store.list_runs(KIND) if r.finished and r.key.get("score_definitions") == SCORE_DEFINITIONS]
    return sorted(runs, key=lambda r: r.model != model)  # stable: newest first within each group


def calibration_label(run: RunInfo) -> str:
    """How a run is named in a picker and above the percentile table."""
    n = run.n_total if run.n_total is not None else run.n_done
    return f"{run.dataset} · {run.model} · {n} texts · run {run.run_id[:8]}"


def calibration_from_run(store: ResultStore, run: RunInfo) -> Calibration:
    """Per-method scores of the run's members (label 1) and non-members (label 0); missing scores dropped."""
    finished_run(run, KIND, "a membership benchmark")
    members: dict[str, list[float]] = {}
    non_members: dict[str, list[float]] = {}
    for sample in store.load_samples(run.run_id):
        if sample.label not in (0, 1):
            continue
        side = members if sample.label == 1 else non_members
        for key, value in sample.scores.items():
            if value is not None and math.isfinite(value):
                side.setdefault(key, []).append(float(value))
    if not members or not non_members:
        raise LeakLensError(f"Run {run.run_id} has no scored members or no scored non-members to calibrate with.")
    return Calibration(calibration_label(run), members=members, non_members=non_members)
