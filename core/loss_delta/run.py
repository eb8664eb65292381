"""Run the loss-delta test: measure every distinct model once (through the store when given), then report."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypedDict

from core.data.problems import ProblemSet
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


class _StoredOptions(TypedDict):
    """The keyword arguments of ``stored_set_losses`` that the test and the reference set share."""

    get_model: Callable[[], ScoringModel]
    store: ResultStore
    token_budget: int
    setup: Mapping[str, Any] | None
    provenance: Mapping[str, Any] | None
    start_token: str | None


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
    load: Callable[[str], ScoringModel],
    pairing: Pairing = "auto",
    store: ResultStore | None = None,
    token_budget: int = DEFAULT_TOKEN_BUDGET,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    progress: ProgressCallback | None = None,
    setup: Mapping[str, Any] | None = None,
    provenance: Mapping[str, Any] | None = None,
    start_token: str | None = None,
) -> LeakageReport:
    """Score every distinct model (base models once, however many models share them) and build the report.

    ``load`` turns a spec into a model (``core.engine.models.load_model``, a page's cached loader, or a
    lookup of in-memory models); each model is scored on both sets before the next one is loaded. With a
    ``store``, losses already stored for a model and problem set are read back, and a model is loaded only
    when something is left to score; ``setup`` and ``provenance`` are recorded with each stored run.
    ``start_token`` (an override of the start-token rule) keys the tested models' runs; base models keep
    their own rule, and ``load`` is expected to load them that way. With a store the whole comparison is
    stored too (``core.loss_delta.comparison``), so the Results page and ``report`` can reopen it.
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
        if store is None:
            measured = measure_model(load(spec), sets, token_budget=token_budget, progress=step)
            losses[spec] = ModelLosses(spec, measured.test, measured.ref)
        else:
            override = start_token if spec in tested else None
            losses[spec] = _measure_stored(spec, sets, load, store, token_budget, step, setup, provenance, override)
            revision = (setup or {}).get("revision")
            set_runs[spec] = [
                run_id_for(KIND, problem_run_key(spec, problems, revision, override))
                for problems in (sets.test, sets.ref)
            ]
    report = build_leakage_report(sets, requests, losses, n_resamples=n_resamples, seed=seed)
    if store is not None:
        saved = save_comparison(store, sets, report, set_runs, provenance=provenance)
        report = replace(report, run_id=saved.run_id)
    return report


def _measure_stored(
    spec: str,
    sets: PairedSets,
    load: Callable[[str], ScoringModel],
    store: ResultStore,
    token_budget: int,
    progress: ProgressCallback | None,
    setup: Mapping[str, Any] | None,
    provenance: Mapping[str, Any] | None,
    start_token: str | None,
) -> ModelLosses:
    loaded: list[ScoringModel] = []

    def get_model() -> ScoringModel:
        if not loaded:
            loaded.append(load(spec))
        return loaded[0]

    n_test, total = len(sets.test), len(sets.test) + len(sets.ref)
    common: _StoredOptions = {
        "get_model": get_model,
        "store": store,
        "token_budget": token_budget,
        "setup": setup,
        "provenance": provenance,
        "start_token": start_token,
    }
    test = stored_set_losses(spec, sets.test, role="test", progress=offset_progress(progress, 0, total), **common)
    ref = stored_set_losses(
        spec, sets.ref, role="reference", progress=offset_progress(progress, n_test, total), **common
    )
    return ModelLosses(spec, test, ref)
