"""Stored runs as tables a person reads: one row per run, a model's loss-delta problem sets grouped.

A loss-delta test stores one run per model and problem set (benchmark and reference losses apart, so each
is reused); listed raw, one comparison shows up as two unrelated rows. These tables group them by model.
No run ids here: ``run_details`` holds those, for a details view and the ``report`` command.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import zip_longest
from typing import Any

from core.store.results import FINISHED, INTERRUPTED, RUNNING, RunInfo

KIND_LABELS = {
    "mia": "Membership benchmark",
    "mcq": "Multiple choice",
    "delta": "Loss delta",
    "delta-comparison": "Loss-delta comparison",
    "dataset-inference": "Dataset inference",
    "calibration": "Calibration",
}
DELTA_KIND = "delta"
DELTA_ROLES = {"test": "benchmark", "reference": "reference"}


def kind_label(kind: str) -> str:
    """The test's name in words (unknown kinds as stored)."""
    return KIND_LABELS.get(kind, kind)


def _group_status(runs: Sequence[RunInfo]) -> str:
    statuses = {r.status for r in runs}
    if statuses == {FINISHED}:
        return FINISHED
    return RUNNING if RUNNING in statuses else INTERRUPTED


def _row(kind: str, dataset: str, model: str, runs: Sequence[RunInfo]) -> dict[str, Any]:
    totals = [r.n_total for r in runs]
    finished = [r.finished_at for r in runs]
    first = min(runs, key=lambda r: r.created_at)
    last = max(runs, key=lambda r: r.finished_at or 0.0)
    return {
        "test": kind_label(kind),
        "kind": kind,
        "dataset": dataset,
        "model": model,
        "status": _group_status(runs),
        "done": sum(r.n_done for r in runs),
        "total": None if any(t is None for t in totals) else sum(totals),
        "started (UTC)": first.timestamp("created_at"),
        "finished (UTC)": last.timestamp("finished_at") if all(f is not None for f in finished) else "",
    }


def _by_model(runs: Sequence[RunInfo]) -> dict[str, list[RunInfo]]:
    groups: dict[str, list[RunInfo]] = {}
    for run in runs:
        groups.setdefault(run.model, []).append(run)
    return groups


def _delta_sets(runs: Sequence[RunInfo]) -> tuple[list[RunInfo], list[RunInfo]]:
    """(benchmark-set runs, reference-set runs) of one model, oldest first."""
    ordered = sorted(runs, key=lambda r: r.created_at)
    tests = [r for r in ordered if r.meta.get("role") != "reference"]
    refs = [r for r in ordered if r.meta.get("role") == "reference"]
    return tests, refs


def run_table(runs: Sequence[RunInfo]) -> list[dict[str, Any]]:
    """One row per stored run, newest first, except loss-delta runs: one row per model, its sets joined."""
    rows = []
    delta_groups = _by_model([r for r in runs if r.kind == DELTA_KIND])
    placed: set[str] = set()
    for run in runs:
        if run.kind != DELTA_KIND:
            rows.append(_row(run.kind, run.dataset, run.model, [run]))
        elif run.model not in placed:
            placed.add(run.model)
            tests, refs = _delta_sets(delta_groups[run.model])
            names = [*dict.fromkeys(r.dataset for r in tests)]
            ref_names = [*dict.fromkeys(r.dataset for r in refs)]
            dataset = " + ".join(names) + (" vs " + " + ".join(ref_names) if ref_names else "")
            rows.append(_row(DELTA_KIND, dataset, run.model, delta_groups[run.model]))
    return rows


def delta_table(runs: Sequence[RunInfo]) -> list[dict[str, Any]]:
    """Loss-delta runs, one row per model (and per further set): benchmark set and reference set side by side.

    Mean loss is the mean solution loss over the set's problems; None while the run is unfinished.
    """
    rows = []
    for model, group in _by_model([r for r in runs if r.kind == DELTA_KIND]).items():
        tests, refs = _delta_sets(group)
        for test, ref in zip_longest(tests, refs):
            rows.append({
                "model": model,
                "benchmark set": test.dataset if test else "",
                "benchmark mean loss": _mean_loss(test),
                "benchmark n": _n(test),
                "reference set": ref.dataset if ref else "",
                "reference mean loss": _mean_loss(ref),
                "reference n": _n(ref),
            })
    return rows


def _mean_loss(run: RunInfo | None) -> float | None:
    if run is None or not run.finished or not run.summary:
        return None
    value = run.summary.get("mean_loss")
    return None if value is None else float(value)


def _n(run: RunInfo | None) -> int | None:
    if run is None:
        return None
    return int(run.summary.get("n", run.n_done)) if run.finished and run.summary else run.n_done


def run_details(runs: Sequence[RunInfo]) -> list[dict[str, Any]]:
    """Every stored run with its id (for ``python -m core report RUN_ID``), one row each."""
    return [
        {"run id": r.run_id, "test": kind_label(r.kind), "dataset": r.dataset, "model": r.model,
         "role": r.meta.get("role", ""), "status": r.status, "started (UTC)": r.timestamp("created_at")}
        for r in runs
    ]
