"""The set-up every stored run shares: its display facts, a model loaded only when work is left, the run
loop, and the note a user sees when the model's weights changed since the same data was last scored.

Membership benchmarks, fresh calibration, loss-delta losses and multiple-choice studies each build their
run through ``run_stored``, so a new stored test kind writes only its key, its scoring and its summary.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from core.engine.progress import ProgressCallback
from core.store.results import ResultStore, RunInfo, SampleRow
from core.store.runloop import RunOutcome, RunRequest, run_resumable, weights_changed_note

ModelT = TypeVar("ModelT")


def run_meta(
    *,
    dataset: str,
    model: str,
    n_total: int,
    task: str | None = None,
    provenance: Mapping[str, Any] | None = None,
    **facts: Any,
) -> dict[str, Any]:
    """The display facts every stored run carries (the Results page lists runs by them), plus ``facts``."""
    meta: dict[str, Any] = {"dataset": dataset, "model": model, "n_total": n_total, **facts}
    if task is not None:
        meta["task"] = task
    if provenance is not None:
        meta["provenance"] = dict(provenance)
    return meta


class LoadOnce(Generic[ModelT]):
    """Calls ``load`` the first time the model is asked for and keeps it: a run read back from the
    store never loads a model at all."""

    def __init__(self, load: Callable[[], ModelT]) -> None:
        self._load = load
        self._loaded: list[ModelT] = []

    def __call__(self) -> ModelT:
        if not self._loaded:
            self._loaded.append(self._load())
        return self._loaded[0]


@dataclass(frozen=True)
class StoredOutcome:
    outcome: RunOutcome
    notes: tuple[str, ...]
    """A weights-changed note when stored runs of other weights exist for the same data and options."""

    @property
    def run(self) -> RunInfo:
        return self.outcome.run

    @property
    def samples(self) -> list[SampleRow]:
        return self.outcome.samples

    @property
    def n_computed(self) -> int:
        return self.outcome.n_computed

    def by_id(self) -> dict[str, SampleRow]:
        return {s.sample_id: s for s in self.outcome.samples}


def run_stored(
    store: ResultStore,
    request: RunRequest,
    sample_ids: Sequence[str],
    *,
    load: Callable[[], ModelT],
    score: Callable[[ModelT, list[int]], Sequence[SampleRow]],
    summarise: Callable[[list[SampleRow]], Mapping[str, Any]],
    batch_size: int,
    progress: ProgressCallback | None = None,
    report_start: bool = True,
    only: Sequence[int] | None = None,
) -> StoredOutcome:
    """Run ``request`` through the resumable loop, ``score(model, positions)`` batch by batch.

    ``load()`` runs at most once, and only when a sample is left to score. The weights-changed note names
    ``request.meta["model"]``. ``only``: the positions to score now (``run_resumable``).
    """
    model = LoadOnce(load)
    outcome = run_resumable(
        store,
        request,
        sample_ids,
        lambda positions: score(model(), positions),
        summarise,
        batch_size=batch_size,
        progress=progress,
        report_start=report_start,
        only=only,
    )
    name = str(request.meta.get("model") or "")
    notes = (weights_changed_note(name, outcome.superseded),) if outcome.superseded else ()
    return StoredOutcome(outcome, notes)
