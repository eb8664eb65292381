"""Every kind of stored run that ends in a verdict, registered once: how it is rebuilt from the store alone
(no model, no data files) and what its finding is. The Results page, its run cards and the combined report
read this registry; which runs are stories at all (a dataset-inference run's scores are part of it, not a
second story) is ``core.store.overview.story_runs``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.data.demo import dataset_label
from core.errors import LeakLensError
from core.inference.run import KIND as INFERENCE_KIND
from core.inference.run import inference_from_run
from core.leakage.comparison import COMPARISON_KIND, report_from_comparison
from core.leakage.finding import leakage_finding
from core.mcq.finding import mcq_finding
from core.mcq.stored import KIND as MCQ_KIND
from core.mcq.stored import mcq_report_from_run
from core.membership.benchmark import KIND as MEMBERSHIP_KIND
from core.membership.benchmark import result_from_store
from core.membership.finding import membership_finding
from core.stats.finding import Finding
from core.store.overview import kind_label
from core.store.results import ResultStore, RunInfo


@dataclass(frozen=True)
class StoryKind:
    """How one kind of stored run is reopened and judged."""

    rebuild: Callable[[ResultStore, RunInfo], Any]
    """The run's result object from the store alone (raises ``LeakLensError`` when it cannot)."""
    finding: Callable[[Any], Finding]


STORY_KINDS: dict[str, StoryKind] = {
    MEMBERSHIP_KIND: StoryKind(result_from_store, membership_finding),
    MCQ_KIND: StoryKind(mcq_report_from_run, mcq_finding),
    COMPARISON_KIND: StoryKind(report_from_comparison, leakage_finding),
    INFERENCE_KIND: StoryKind(inference_from_run, lambda inference: inference.finding),
}


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
    """Rebuild a finished run of a registered kind; a ``LeakLensError`` says why one cannot be opened."""
    story = STORY_KINDS.get(run.kind)
    if story is None:
        raise LeakLensError(f"Run {run.run_id} is a '{run.kind}' run, which has no verdict of its own.")
    if not run.finished:
        raise LeakLensError(f"Run {run.run_id} ({data_label(run)}) is not finished ({run.status}); run it again "
                            "to resume it.")
    result = story.rebuild(store, run)
    return StoredResult(run, result, story.finding(result))


def try_open(store: ResultStore, run: RunInfo) -> tuple[StoredResult | None, str | None]:
    """(the reopened run, None), or (None, why it cannot be opened), e.g. a run stored by an older LeakLens."""
    try:
        return open_stored(store, run), None
    except LeakLensError as exc:
        return None, str(exc)


_WHERE = re.compile(r"^(?P<name>.+?) \((?P<where>[^()]+)\)$")


def name_label(name: str) -> str:
    """A stored data name as people call it: a demo's title, with any row filter kept ("... (label=1)")."""
    match = _WHERE.match(name.strip())
    if match and dataset_label(match["name"]) != match["name"]:
        return f"{dataset_label(match['name'])} ({match['where']})"
    return dataset_label(name)


def pair_label(first: str, second: str) -> str:
    """Two sets compared: "A vs B", or "A: x vs y" when both are rows of the same data."""
    a, b = _WHERE.match(first.strip()), _WHERE.match(second.strip())
    if a and b and a["name"] == b["name"]:
        return f"{dataset_label(a['name'])}: {a['where']} vs {b['where']}"
    return f"{name_label(first)} vs {name_label(second)}"


def data_label(run: RunInfo) -> str:
    """The data a run is about, as people call it (demo titles, never a cache path)."""
    meta = run.meta
    if run.kind == INFERENCE_KIND and meta.get("suspect") and meta.get("validation"):
        return pair_label(str(meta["suspect"]), str(meta["validation"]))
    if run.kind == COMPARISON_KIND and meta.get("test_name") and meta.get("ref_name"):
        return pair_label(str(meta["test_name"]), str(meta["ref_name"]))
    return name_label(run.dataset or str(meta.get("dataset", "")))


@dataclass(frozen=True)
class RunCard:
    """One line of the list of runs: what was tested, on what, with which model and when, and the verdict."""

    run_id: str
    kind: str
    test: str
    """The test in words ("Membership benchmark")."""
    data: str
    model: str
    date: str
    """When the run finished, ``YYYY-MM-DD HH:MM UTC``."""
    finding: Finding | None
    """None when the run cannot be opened (``problem`` says why)."""
    problem: str = ""

    @property
    def level(self) -> str | None:
        return None if self.finding is None else self.finding.level

    @property
    def headline(self) -> str:
        return self.finding.headline if self.finding is not None else self.problem


def run_card(run: RunInfo, opened: StoredResult | None, problem: str | None = None) -> RunCard:
    """The card of a finished run, from its reopened result (or the reason it could not be reopened)."""
    date = run.timestamp("finished_at" if run.finished_at is not None else "created_at")[:16]
    return RunCard(run.run_id, run.kind, kind_label(run.kind), data_label(run), run.model,
                   f"{date} UTC" if date else "", None if opened is None else opened.finding,
                   problem or ("" if opened is not None else "This run cannot be opened."))
