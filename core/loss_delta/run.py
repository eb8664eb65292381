"""Run the loss-delta test: measure every distinct model once (through the store when given), then report."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from core.data.problems import ProblemSet
from core.engine.handle import ModelHandle
from core.engine.progress import ProgressCallback, offset_progress
from core.engine.scoring import DEFAULT_TOKEN_BUDGET, ScoringModel
from core.errors import DataError
from core.loss_delta.comparison import save_comparison
from core.loss_delta.delta import (
    LeakageReport,
    ModelRequest,
    PairedSets,
    Pairing,
    build_leakage_report,
    distinct_specs,
    pair_sets,
)
from core.loss_delta.losses import ModelLosses, solution_losses
from core.loss_delta.stored import KIND, problem_run_key, stored_set_losses
from core.stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED
from core.store.results import ResultStore, run_id_for


def measure_model(
    lm: ScoringModel,
    sets: PairedSets,
    *,
    token_budget: int = DEFAULT_TOKEN_BUDGET,
    progress: ProgressCallback | None = None,
) -> ModelLosses:
    """Score the test and the reference set with one model."""
    n_test = len(sets.test)
    total = n_test + len(sets.ref)
    test = solution_losses(
        lm, sets.test.problems, token_budget=token_budget, progress=offset_progress(progress, 0, total)
    )
    ref = solution_losses(
        lm, sets.ref.problems, token_budget=token_budget, progress=offset_progress(progress, n_test, total)
    )
    return ModelLosses(lm.spec, tuple(test), tuple(ref))


def run_leakage_test(
    test: ProblemSet,
    ref: ProblemSet,
    requests: Sequence[ModelRequest],
    *,
    model: ModelHandle,
    pairing: Pairing = "auto",
    store: ResultStore | None = None,
    token_budget: int = DEFAULT_TOKEN_BUDGET,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    progress: ProgressCallback | None = None,
    provenance: Mapping[str, Any] | None = None,
) -> LeakageReport:
    """Score every distinct model (base models once, however many models share them) and build the report.

    Every requested spec is resolved beside ``model`` (the tested choice: its setup and loader); tested models
    keep its start-token override, base models their own rule. Each model is scored on both sets before the
    next one is loaded. With a ``store``, losses already stored for a model and problem set are read back, and
    a model is loaded only when something is left to score; ``provenance`` is recorded with each stored run.
    With a store the whole comparison is stored too (``core.loss_delta.comparison``), so the Results page and
    ``report`` can reopen it.
    """
    if not requests:
        raise DataError("Choose at least one model to test.")
    sets = pair_sets(test, ref, pairing)
    specs = distinct_specs(requests)
    per_model = len(sets.test) + len(sets.ref)
    total = per_model * len(specs)
    tested = {req.model for req in requests}
    losses: dict[str, ModelLosses] = {}
    set_runs: dict[str, list[str]] = {}
    for index, spec in enumerate(specs):
        step = offset_progress(progress, index * per_model, total)
        handle = model.beside(spec, tested=spec in tested)
        if store is None:
            measured = measure_model(handle.load(), sets, token_budget=token_budget, progress=step)
            losses[spec] = ModelLosses(spec, measured.test, measured.ref)
        else:
            losses[spec] = _measure_stored(handle, sets, store, token_budget, step, provenance)
            set_runs[spec] = [run_id_for(KIND, problem_run_key(handle, problems)) for problems in (sets.test, sets.ref)]
    report = build_leakage_report(sets, requests, losses, n_resamples=n_resamples, seed=seed)
    if store is not None:
        saved = save_comparison(store, sets, report, set_runs, provenance=provenance)
        report = replace(report, run_id=saved.run_id)
    return report


def _measure_stored(
    model: ModelHandle,
    sets: PairedSets,
    store: ResultStore,
    token_budget: int,
    progress: ProgressCallback | None,
    provenance: Mapping[str, Any] | None,
) -> ModelLosses:
    n_test, total = len(sets.test), len(sets.test) + len(sets.ref)
    test = stored_set_losses(
        model,
        sets.test,
        role="test",
        store=store,
        token_budget=token_budget,
        provenance=provenance,
        progress=offset_progress(progress, 0, total),
    )
    ref = stored_set_losses(
        model,
        sets.ref,
        role="reference",
        store=store,
        token_budget=token_budget,
        provenance=provenance,
        progress=offset_progress(progress, n_test, total),
    )
    return ModelLosses(model.spec, test, ref)
