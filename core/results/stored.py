"""A finished stored run reopened from the store alone, its verdict, and its card in the list of runs; every
kind is opened the way ``core.results.kinds`` registers it. Which runs are stories at all (a dataset-inference
run's scores are part of it, not a second story) is ``core.results.overview.story_runs``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.errors import LeakLensError
from core.results.kinds import kind_of
from core.stats.finding import Finding
from core.store.results import ResultStore, RunInfo
from core.viz.reports.shell import CsvFile
from core.viz.run_cards import RunCard


@dataclass(frozen=True)
class StoredResult:
    """A finished run reopened: the stored run, its rebuilt result and its verdict."""

    run: RunInfo
    result: Any
    finding: Finding

    @property
    def kind(self) -> str:
        return self.run.kind


def open_stored(store: ResultStore, run: RunInfo) -> StoredResult:
    """Rebuild a finished run of a registered kind; a ``LeakLensError`` says why one cannot be opened (the kind's
    rebuild refuses a run not finished: ``core.store.stored_run.finished_run``)."""
    kind = kind_of(run.kind)
    if kind.rebuild is None or kind.finding is None:
        raise LeakLensError(f"Run {run.run_id} is a '{run.kind}' run, which has no verdict of its own.")
    result = kind.rebuild(store, run)
    return StoredResult(run, result, kind.finding(result))


def try_open(store: ResultStore, run: RunInfo) -> tuple[StoredResult | None, str | None]:
    """(the reopened run, None), or (None, why it cannot be opened), e.g. a run stored by an older LeakLens."""
    try:
        return open_stored(store, run), None
    except LeakLensError as exc:
        return None, str(exc)


def data_label(run: RunInfo) -> str:
    """The data a run is about, as people call it (demo titles, never a cache path)."""
    return kind_of(run.kind).data_label(run)


def stored_csv(stored: StoredResult) -> CsvFile:
    """The numbers behind a reopened run's verdict as CSV, every row led by the verdict, model and data."""
    kind = kind_of(stored.kind)
    if kind.csv is None:
        raise LeakLensError(f"Run {stored.run.run_id} is a '{stored.kind}' run: it has no CSV export.")
    return kind.csv(stored.result, stored.finding, stored.run)


def run_card(run: RunInfo, opened: StoredResult | None, problem: str | None = None) -> RunCard:
    """The card of a finished run, from its reopened result (or the reason it could not be reopened)."""
    date = run.timestamp("finished_at" if run.finished_at is not None else "created_at")[:16]
    return RunCard(
        run.run_id,
        run.kind,
        kind_of(run.kind).label,
        data_label(run),
        run.model,
        f"{date} UTC" if date else "",
        None if opened is None else opened.finding,
        problem or ("" if opened is not None else "This run cannot be opened."),
    )
