"""The one resumable run loop: membership, loss-delta and multiple-choice runs all go through it.

A run is a list of sample ids scored batch by batch; each batch is written to the results store before
the next starts, so an interrupted run loses at most one batch and resumes where it stopped, and a
finished run is read back instead of recomputed. A run remembers the setup it was computed under
(device, dtype, model revision): a run asked for under another setup is refused, never mixed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.engine.progress import ProgressCallback
from core.errors import LeakLensError
from core.store.results import ResultStore, RunFinishedError, RunInfo, SampleRow

log = logging.getLogger(__name__)

WAIT_POLL_S = 0.5
"""How often a run being computed by another process is checked while waiting for it."""
SETUP_FIELDS = ("device", "dtype", "revision")
IDENTITY_FIELDS = ("model_identity", "reference_identity")
"""Key entries naming which weights computed a run: a run differing only there belongs to other weights."""


class SetupMismatchError(LeakLensError):
    """A stored run was computed under another device, dtype or revision than the one asked for."""


@dataclass(frozen=True)
class RunRequest:
    """What a run is (kind and key: its identity) and what is recorded about it."""

    kind: str
    key: Mapping[str, Any]
    meta: Mapping[str, Any] = field(default_factory=dict)
    """Display facts (``dataset``, ``model``, ``n_total``, ...) and the ``provenance`` block."""
    setup: Mapping[str, Any] | None = None
    """Device, dtype and revision the samples are computed under; None for work no model computes."""


@dataclass(frozen=True)
class RunOutcome:
    run: RunInfo
    """The finished run."""
    samples: list[SampleRow]
    """Every stored sample, in the order first written."""
    n_computed: int
    """Samples scored by this call (0 when all came from the store)."""
    superseded: list[RunInfo] = field(default_factory=list)
    """Stored runs identical to this one but for the model weights: kept, listed, never reused."""


def check_setup(run: RunInfo, setup: Mapping[str, Any] | None) -> None:
    """Refuse a stored run whose recorded setup differs from ``setup`` (see the module docstring)."""
    stored = run.meta.get("setup")
    if setup is None or not stored:
        return
    differences = [
        f"{name} {stored.get(name) or 'default'} (asked for now: {setup.get(name) or 'default'})"
        for name in SETUP_FIELDS
        if (stored.get(name) or None) != (setup.get(name) or None)
    ]
    if not differences:
        return
    state = "finished" if run.finished else f"{run.status}, {run.n_done} samples stored"
    flags = " ".join(f"--{name} {stored[name]}" for name in SETUP_FIELDS if stored.get(name))
    raise SetupMismatchError(
        f"Stored run {run.run_id} ({state}) was computed with {', '.join(differences)}. Scores computed under "
        f"another setup are never mixed into one run. Continue it with the setup it started with ({flags}), or "
        "start a fresh run elsewhere: --store OTHER_FILE (or --no-store), or delete the run on the Results page."
    )


def run_resumable(
    store: ResultStore,
    request: RunRequest,
    sample_ids: Sequence[str],
    score_batch: Callable[[list[int]], Sequence[SampleRow]],
    summarise: Callable[[list[SampleRow]], Mapping[str, Any]],
    *,
    batch_size: int,
    progress: ProgressCallback | None = None,
    report_start: bool = True,
) -> RunOutcome:
    """Score the samples not yet stored, ``batch_size`` at a time, then finish the run with its summary.

    ``score_batch(positions)`` scores the samples at those positions of ``sample_ids`` and returns their
    rows; ``summarise(samples)`` turns all stored samples into the summary kept with the finished run.
    ``progress(done, total)`` counts samples, those already stored included; with ``report_start`` it
    is also called once before the first batch, with the count found in the store.
    """
    if batch_size < 1:
        raise LeakLensError(f"The batch size must be at least 1, got {batch_size}.")
    if len(set(sample_ids)) != len(sample_ids):
        raise LeakLensError("Sample ids must be unique within a run.")
    total = len(sample_ids)
    existing = store.find_run(request.kind, request.key)
    if existing is not None:
        check_setup(existing, request.setup)
    superseded = [] if existing is not None else runs_of_other_weights(store, request.kind, request.key)
    meta = dict(request.meta)
    if request.setup is not None:
        meta["setup"] = dict(request.setup)
    run = _claim_or_wait(store, request, meta, total, progress)
    if run.finished:
        if progress is not None:
            progress(total, total)
        return RunOutcome(run, store.load_samples(run.run_id), 0, superseded)
    done_ids = store.done_sample_ids(run.run_id)
    todo = [i for i, sample_id in enumerate(sample_ids) if sample_id not in done_ids]
    n_done = total - len(todo)
    if progress is not None and report_start:
        progress(n_done, total)
    try:
        for start in range(0, len(todo), batch_size):
            batch = todo[start : start + batch_size]
            try:
                store.add_samples(run.run_id, list(score_batch(batch)))
            except RunFinishedError:
                # Another process took the run over (it looked stalled) and finished it: its results stand.
                finished = store.get_run(run.run_id) or run
                return RunOutcome(finished, store.load_samples(run.run_id), 0, superseded)
            n_done += len(batch)
            if progress is not None:
                progress(n_done, total)
        samples = store.load_samples(run.run_id)
        summary = summarise(samples)
    except BaseException:
        store.mark_interrupted(run.run_id)
        raise
    return RunOutcome(store.finish_run(run.run_id, summary), samples, len(todo), superseded)


def _claim_or_wait(
    store: ResultStore, request: RunRequest, meta: Mapping[str, Any], total: int, progress: ProgressCallback | None
) -> RunInfo:
    """The run, claimed by this process; while another live process computes it, wait for that one.

    Two identical commands started together must not both do all the work: the second follows the
    first's progress and reads its results back (or resumes the run if the first dies).
    """
    announced = False
    while True:
        run, claimed = store.claim_run(request.kind, request.key, meta)
        if claimed or run.finished:
            return run
        if not announced:
            log.warning("Run %s is being computed by another process; waiting for it to finish and reading its "
                        "results back (Ctrl-C stops waiting; the other process goes on).", run.run_id)
            announced = True
        if progress is not None:
            progress(run.n_done, total)
        time.sleep(WAIT_POLL_S)


def runs_of_other_weights(store: ResultStore, kind: str, key: Mapping[str, Any]) -> list[RunInfo]:
    """Stored runs whose key matches ``key`` in everything but the model weights' identity."""
    def rest(k: Mapping[str, Any]) -> dict[str, Any]:
        return {name: value for name, value in k.items() if name not in IDENTITY_FIELDS}

    wanted = rest(key)
    return [
        run for run in store.list_runs(kind)
        if rest(run.key) == wanted and any(run.key.get(f) != key.get(f) for f in IDENTITY_FIELDS)
    ]


def weights_changed_note(model: str, superseded: Sequence[RunInfo]) -> str:
    """The line a user sees when a model's weights changed since it was last run on the same data."""
    ids = ", ".join(run.run_id for run in superseded)
    return (
        f"The weights behind '{model}' changed since stored run {ids}: scored again with the current weights "
        "(the earlier run stays listed under the old weights)."
    )
