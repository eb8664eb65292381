"""Stored runs as a person reads them: one story per run, one row per run, a model's loss-delta sets grouped.

Some runs are parts of another: a dataset-inference run scores both sets as a membership run and keeps only
which one (its key's ``scores_run``); a loss-delta comparison is built from each model's problem-set runs
(its key's ``set_runs``). Such a part is never a second story: ``story_runs`` (the Results page's list of
verdicts, and the combined report) leaves it out, and ``run_table`` lists it under the run it belongs to.
A loss-delta test stores one run per model and problem set (benchmark and reference losses apart, so each
is reused); listed raw, one comparison shows up as two unrelated rows. These tables group them by model.
No run ids here: ``run_details`` holds those, for a details view and the ``report`` command.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from itertools import zip_longest
from typing import Any

from core.results.kinds import KINDS, STORY_KINDS, kind_label
from core.store.results import FINISHED, INTERRUPTED, RUNNING, RunInfo

PART_LINKS = ("scores_run", "set_runs", "part_runs")
"""Key fields by which a run names the runs it is built from (dataset inference, loss-delta comparison, audit)."""
PER_MODEL_KINDS = frozenset(kind.name for kind in KINDS if kind.listed_per_model)
"""Kinds listed one row per model, their sets joined (a model's loss-delta problem sets)."""


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


def _linked_ids(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _linked_ids(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _linked_ids(item)


def parts_of(runs: Sequence[RunInfo]) -> dict[str, str]:
    """Which run each part belongs to: {part's run id: id of the (newest) stored run built from it}.

    A run is a part when another stored run names it in its key (``PART_LINKS``): the membership run that
    holds a dataset-inference run's scores, the problem-set runs of a loss-delta comparison.
    """
    ids = {r.run_id for r in runs}
    owner: dict[str, str] = {}
    for run in sorted(runs, key=_newest_first):
        for field in PART_LINKS:
            for linked in _linked_ids(run.key.get(field)):
                if linked in ids and linked != run.run_id:
                    owner.setdefault(linked, run.run_id)
    return owner


def _newest_first(run: RunInfo) -> float:
    return -(run.finished_at or run.created_at)


def story_runs(runs: Sequence[RunInfo]) -> list[RunInfo]:
    """Finished runs that each tell a story of their own (a verdict), newest finished first; parts left out."""
    parts = parts_of(runs)
    stories = [r for r in runs if r.finished and r.kind in STORY_KINDS and r.run_id not in parts]
    return sorted(stories, key=_newest_first)


def runs_named(runs: Sequence[RunInfo], wanted: str) -> list[RunInfo]:
    """The run whose id is ``wanted``, else every run whose id starts with it (a unique prefix names one run)."""
    return [r for r in runs if r.run_id == wanted] or [r for r in runs if wanted and r.run_id.startswith(wanted)]


def unfinished_runs(runs: Sequence[RunInfo]) -> list[RunInfo]:
    """Runs not finished (running or interrupted), parts of other runs left out, newest first."""
    parts = parts_of(runs)
    return [r for r in runs if not r.finished and r.run_id not in parts]


def filter_runs(
    runs: Sequence[RunInfo], *, models: Collection[str] | None = None, kinds: Collection[str] | None = None
) -> list[RunInfo]:
    """The runs of these models and kinds (None = any), in the order given."""
    return [r for r in runs if (models is None or r.model in models) and (kinds is None or r.kind in kinds)]


def opened_run(
    listed: Sequence[RunInfo],
    chosen: str | None = None,
    *,
    newest_when_chosen: str | None = None,
    newest: str | None = None,
) -> RunInfo | None:
    """The run to open: the one ``chosen`` while it is listed, else the most recent listed (``listed[0]``).

    ``newest`` is the newest story in the store (default: ``listed[0]``); a choice made while another run was
    the newest (``newest_when_chosen``) gives way: whoever comes back to Results after running a test sees
    what they just ran, not what they had opened before.
    """
    if not listed:
        return None
    newest = newest or listed[0].run_id
    if chosen and newest_when_chosen in (None, newest):
        return next((r for r in listed if r.run_id == chosen), listed[0])
    return listed[0]


def run_table(runs: Sequence[RunInfo]) -> list[dict[str, Any]]:
    """One row per stored run, newest first, except loss-delta runs: one row per model, its sets joined.

    A run that is part of another (``parts_of``) has no row of its own: its owner's row counts its texts
    when the owner holds none itself (a dataset-inference run keeps its scores in its part).
    """
    rows = []
    parts = parts_of(runs)
    inner: dict[str, list[RunInfo]] = {}
    for run in runs:
        if run.run_id in parts:
            inner.setdefault(parts[run.run_id], []).append(run)
    runs = [r for r in runs if r.run_id not in parts]
    delta_groups = _by_model([r for r in runs if r.kind in PER_MODEL_KINDS])
    placed: set[str] = set()
    for run in runs:
        if run.kind not in PER_MODEL_KINDS:
            row = _row(run.kind, run.dataset, run.model, [run])
            if not run.n_total and inner.get(run.run_id):
                row["done"] = sum(r.n_done for r in inner[run.run_id])
                totals = [r.n_total for r in inner[run.run_id]]
                row["total"] = None if any(t is None for t in totals) else sum(totals)
            rows.append(row)
        elif run.model not in placed:
            placed.add(run.model)
            tests, refs = _delta_sets(delta_groups[run.model])
            names = [*dict.fromkeys(r.dataset for r in tests)]
            ref_names = [*dict.fromkeys(r.dataset for r in refs)]
            dataset = " + ".join(names) + (" vs " + " + ".join(ref_names) if ref_names else "")
            rows.append(_row(run.kind, dataset, run.model, delta_groups[run.model]))
    return rows


def delta_table(runs: Sequence[RunInfo]) -> list[dict[str, Any]]:
    """Loss-delta runs, one row per model (and per further set): benchmark set and reference set side by side.

    Mean loss is the mean solution loss over the set's problems; None while the run is unfinished.
    """
    rows = []
    for model, group in _by_model([r for r in runs if r.kind in PER_MODEL_KINDS]).items():
        tests, refs = _delta_sets(group)
        for test, ref in zip_longest(tests, refs):
            rows.append(
                {
                    "model": model,
                    "benchmark set": test.dataset if test else "",
                    "benchmark mean loss": _mean_loss(test),
                    "benchmark n": _n(test),
                    "reference set": ref.dataset if ref else "",
                    "reference mean loss": _mean_loss(ref),
                    "reference n": _n(ref),
                }
            )
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
    """Every stored run with its id (for ``python -m core report RUN_ID``), one row each; a part names its owner."""
    parts = parts_of(runs)
    kinds = {r.run_id: r.kind for r in runs}

    def role(run: RunInfo) -> str:
        if run.run_id in parts:
            owner = parts[run.run_id]
            return f"part of {kind_label(kinds[owner]).lower()} run {owner[:8]}"
        return str(run.meta.get("role", ""))

    return [
        {
            "run id": r.run_id,
            "test": kind_label(r.kind),
            "dataset": r.dataset,
            "model": r.model,
            "role": role(r),
            "status": r.status,
            "started (UTC)": r.timestamp("created_at"),
        }
        for r in runs
    ]
