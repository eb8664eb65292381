"""The set-up every stored run shares: its display facts, a model loaded only when work is left, the run
loop, and the note a user sees when the model's weights changed since the same data was last scored.

Membership benchmarks, fresh calibration, loss-delta losses and multiple-choice studies each build their
run through ``run_stored``, so a new stored test kind writes only its key, its scoring and its summary. Every
function that rebuilds a result from a stored run starts with ``finished_run``: the one check, and the one error,
for a run of another kind or one not finished.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from core.data.demo import name_label
from core.engine.progress import ProgressCallback
from core.errors import LeakLensError
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


def data_name(run: RunInfo) -> str:
    """The data a run is about, as people call it: a demo's title, else the name it was stored under."""
    return name_label(run.dataset or str(run.meta.get("dataset", "")))


def finished_run(run: RunInfo, kind: str, test: str) -> RunInfo:
    """``run``, when it is a finished run of ``kind``; else the error that says which run it is and what to do.

    ``test`` names the kind in words, with its article ("a benchmark-order run"). Every rebuild of a result from
    the store calls this first, so a run of another kind or one still running (or interrupted) is refused in the
    same words everywhere: the Results page's card, ``python -m core report`` and each test's own reader.
    """
    if run.kind != kind:
        raise LeakLensError(f"Run {run.run_id} is a '{run.kind}' run, not {test}.")
    if not run.finished:
        raise LeakLensError(
            f"Run {run.run_id} ({data_name(run) or run.kind}) is not finished ({run.status}); run the test again "
            "with the same data, model and settings to resume it."
        )
    return run


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
