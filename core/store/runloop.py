"""The one resumable run loop: membership, loss-delta and multiple-choice runs all go through it.

A run is a list of sample ids scored batch by batch; each batch is written to the results store before
the next starts, so an interrupted run loses at most one batch and resumes where it stopped, and a
finished run is read back instead of recomputed. A run remembers the setup it was computed under
(device, dtype, model revision): a run asked for under another setup is refused, never mixed. Under
``torchrun`` the same loop shares each run's batches among processes and machines (docs/scaling.md).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.data.fingerprint import fingerprint_rows
from core.engine import distributed
from core.engine.progress import ProgressCallback
from core.errors import LeakLensError
from core.store.results import ResultStore, RunFinishedError, RunInfo, SampleRow, run_id_for

log = logging.getLogger(__name__)

WAIT_POLL_S = 0.5
"""How often a run being computed by another process is checked while waiting for it."""
SETUP_FIELDS = ("device", "dtype", "revision")
IDENTITY_FIELDS = ("model_identity", "reference_identity")
"""Key entries naming which weights computed a run: a run differing only there belongs to other weights."""
DEFAULT_BATCH_SIZE = 16
"""Samples per stored batch unless the caller chooses: an interruption loses at most one batch."""
PROGRESS_STEPS = 50
"""A watched run's bar moves at least this many times (the store writes, and Cancel stops, per batch)."""


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
    """The run: finished, or still partial when only some samples were asked for (``only``)."""
    samples: list[SampleRow]
    """Every stored sample, in the order first written."""
    n_computed: int
    """Samples scored by this call (0 when all came from the store)."""
    superseded: list[RunInfo] = field(default_factory=list)
    """Stored runs identical to this one but for the model weights: kept, listed, never reused."""


def progress_batch_size(n_samples: int, largest: int = DEFAULT_BATCH_SIZE) -> int:
    """Samples per stored batch for a run a person watches: 1 (per sample) below ``2 * PROGRESS_STEPS``
    samples, then ``n_samples // PROGRESS_STEPS`` up to ``largest``, so the bar moves every few seconds and
    Cancel answers quickly. Scores do not depend on the batch size."""
    return max(1, min(largest, n_samples // PROGRESS_STEPS))


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
    only: Sequence[int] | None = None,
) -> RunOutcome:
    """Score the samples not yet stored, ``batch_size`` at a time, then finish the run with its summary.

    ``only``: the positions wanted now, in the order to score them (e.g. the samples an answer needs first);
    the others are left for a later call, and the run stays unfinished (resumable) until every sample is
    stored. ``progress`` then counts the wanted samples only.

    ``score_batch(positions)`` scores the samples at those positions of ``sample_ids`` and returns their
    rows; ``summarise(samples)`` turns all stored samples into the summary kept with the finished run.
    ``progress(done, total)`` counts samples, those already stored included; with ``report_start`` it
    is also called once before the first batch, with the count found in the store.

    Inside a torch.distributed process group of several ranks (``torchrun``) the batches are shared out
    (``_run_sharded``); every rank returns the same outcome.
    """
    if batch_size < 1:
        raise LeakLensError(f"The batch size must be at least 1, got {batch_size}.")
    if len(set(sample_ids)) != len(sample_ids):
        raise LeakLensError("Sample ids must be unique within a run.")
    ranks = distributed.current()
    if ranks is not None:  # shared out among processes: the whole run, every rank the same batches
        return _run_sharded(
            ranks,
            store,
            request,
            sample_ids,
            score_batch,
            summarise,
            batch_size=batch_size,
            progress=progress,
            report_start=report_start,
        )
    plan = _plan(store, request, sample_ids, progress)
    if plan.finished is not None:
        _report(progress, len(sample_ids), len(sample_ids))
        return plan.finished
    total, todo = len(sample_ids), plan.todo
    if only is not None:
        left = set(todo)
        wanted = list(dict.fromkeys(only))
        if any(not 0 <= i < total for i in wanted):
            raise LeakLensError(f"Asked for samples outside the run's {total}.")
        todo, total = [i for i in wanted if i in left], len(wanted)
    n_done = total - len(todo)
    if report_start:
        _report(progress, n_done, total)
    try:
        for start in range(0, len(todo), batch_size):
            batch = todo[start : start + batch_size]
            taken_over = _write(store, plan, list(score_batch(batch)))
            if taken_over is not None:
                return taken_over
            n_done += len(batch)
            _report(progress, n_done, total)
        if only is not None and len(store.done_sample_ids(plan.run.run_id)) < len(sample_ids):
            store.mark_interrupted(plan.run.run_id)  # the rest waits for a call that needs it
            partial = store.get_run(plan.run.run_id) or plan.run
            return RunOutcome(partial, store.load_samples(plan.run.run_id), len(todo), plan.superseded)
        return _finish(store, plan, summarise)
    except BaseException:
        store.mark_interrupted(plan.run.run_id)
        raise


def _run_sharded(
    ranks: distributed.Ranks,
    store: ResultStore,
    request: RunRequest,
    sample_ids: Sequence[str],
    score_batch: Callable[[list[int]], Sequence[SampleRow]],
    summarise: Callable[[list[SampleRow]], Mapping[str, Any]],
    *,
    batch_size: int,
    progress: ProgressCallback | None,
    report_start: bool,
) -> RunOutcome:
    """The run shared among ranks: each step, rank r scores the r-th batch of ``batch_size`` samples.

    Rank 0 alone touches ``store``: it plans the run (what is stored already), writes every step's rows in
    sample order and finishes the run; the other ranks only score, and at the end copy the finished run
    into their own ``store`` (a private one under the CLI) so callers read it back as usual. Each rank scores
    exactly the batches a single process would (scores move with batch composition at rounding level), so
    the stored results equal a single-process run's bit for bit.
    """
    _check_same_run(request, sample_ids)
    main = ranks.is_main
    if not main:
        progress = None
    plan = distributed.run_on_main(lambda: _plan(store, request, sample_ids, progress))
    total = len(sample_ids)
    if plan.finished is not None:
        _report(progress, total, total)
        return _mirrored(store, plan.finished, main)
    n_done = total - len(plan.todo)
    if report_start:
        _report(progress, n_done, total)
    step = batch_size * ranks.world_size
    try:
        for start in range(0, len(plan.todo), step):
            chunk = plan.todo[start : start + step]
            mine = chunk[ranks.rank * batch_size : (ranks.rank + 1) * batch_size]

            def scored(mine: list[int] = mine) -> list[SampleRow]:
                return list(score_batch(mine)) if mine else []

            shards = distributed.gather_from_all(scored)
            rows = [row for shard in shards for row in shard]

            def written(rows: list[SampleRow] = rows) -> RunOutcome | None:
                return _write(store, plan, rows)

            taken_over = distributed.run_on_main(written)
            if taken_over is not None:
                return _mirrored(store, taken_over, main)
            n_done += len(chunk)
            _report(progress, n_done, total)
        outcome = distributed.run_on_main(lambda: _finish(store, plan, summarise))
    except BaseException:
        if main:
            store.mark_interrupted(plan.run.run_id)
        raise
    return _mirrored(store, outcome, main)


@dataclass(frozen=True)
class _Plan:
    """Where a run stands before scoring: its stored run, what is left to score, or its finished outcome."""

    run: RunInfo
    superseded: list[RunInfo]
    todo: list[int]
    """Positions in ``sample_ids`` not yet stored."""
    finished: RunOutcome | None = None


def _plan(
    store: ResultStore, request: RunRequest, sample_ids: Sequence[str], progress: ProgressCallback | None
) -> _Plan:
    """Check the stored run's setup, claim it (or wait for the process computing it), list what is left."""
    existing = store.find_run(request.kind, request.key)
    if existing is not None:
        check_setup(existing, request.setup)
    superseded = [] if existing is not None else runs_of_other_weights(store, request.kind, request.key)
    meta = dict(request.meta)
    if request.setup is not None:
        meta["setup"] = dict(request.setup)
    run = _claim_or_wait(store, request, meta, len(sample_ids), progress)
    if run.finished:
        return _Plan(run, superseded, [], RunOutcome(run, store.load_samples(run.run_id), 0, superseded))
    done_ids = store.done_sample_ids(run.run_id)
    todo = [i for i, sample_id in enumerate(sample_ids) if sample_id not in done_ids]
    return _Plan(run, superseded, todo)


def _write(store: ResultStore, plan: _Plan, rows: list[SampleRow]) -> RunOutcome | None:
    """Store one batch's rows; the finished run's outcome if another process took the run over and finished it."""
    try:
        store.add_samples(plan.run.run_id, rows)
    except RunFinishedError:
        # Another process took the run over (it looked stalled) and finished it: its results stand.
        finished = store.get_run(plan.run.run_id) or plan.run
        return RunOutcome(finished, store.load_samples(plan.run.run_id), 0, plan.superseded)
    return None


def _finish(store: ResultStore, plan: _Plan, summarise: Callable[[list[SampleRow]], Mapping[str, Any]]) -> RunOutcome:
    samples = store.load_samples(plan.run.run_id)
    summary = summarise(samples)
    return RunOutcome(store.finish_run(plan.run.run_id, summary), samples, len(plan.todo), plan.superseded)


def _report(progress: ProgressCallback | None, done: int, total: int) -> None:
    if progress is not None:
        progress(done, total)


def _check_same_run(request: RunRequest, sample_ids: Sequence[str]) -> None:
    """Every rank must be asked for the same run over the same samples (same data, weights and options)."""
    mine = (run_id_for(request.kind, request.key), fingerprint_rows([s] for s in sample_ids))
    seen = distributed.all_gather(mine)
    odd = [rank for rank, theirs in enumerate(seen) if theirs != seen[0]]
    if odd:
        raise LeakLensError(
            f"Rank {odd[0]} was asked for another run than rank 0 (run {seen[odd[0]][0]} vs {seen[0][0]}, or other "
            "samples): every rank needs the same data, model files and options. On several machines, give each "
            "the same dataset and model paths (or hub ids and revisions)."
        )


def _mirrored(store: ResultStore, outcome: RunOutcome, main: bool) -> RunOutcome:
    """The outcome, with the finished run copied into a non-main rank's own store (unless already there)."""
    if main:
        return outcome
    held = store.get_run(outcome.run.run_id)
    if held is None or not held.finished:
        run = store.get_or_create_run(outcome.run.kind, outcome.run.key, outcome.run.meta)
        store.add_samples(run.run_id, outcome.samples)
        store.finish_run(run.run_id, outcome.run.summary)
    return outcome


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
            log.warning(
                "Run %s is being computed by another process; waiting for it to finish and reading its "
                "results back (Ctrl-C stops waiting; the other process goes on).",
                run.run_id,
            )
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
        run
        for run in store.list_runs(kind)
        if rest(run.key) == wanted and any(run.key.get(f) != key.get(f) for f in IDENTITY_FIELDS)
    ]


def weights_changed_note(model: str, superseded: Sequence[RunInfo]) -> str:
    """The line a user sees when a model's weights changed since it was last run on the same data."""
    ids = ", ".join(run.run_id for run in superseded)
    return (
        f"The weights behind '{model}' changed since stored run {ids}: scored again with the current weights "
        "(the earlier run stays listed under the old weights)."
    )
