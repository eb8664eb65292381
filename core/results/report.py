"""The self-contained HTML report of stored runs, rebuilt from the store alone: the Results page's exports and
``python -m core report RUN_ID``. Each kind's sections come from its registration (``core.results.kinds``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from core.errors import LeakLensError
from core.results.kinds import KINDS, kind_of
from core.results.overview import parts_of, runs_named
from core.results.stored import StoredResult, open_stored
from core.store.results import ResultStore, RunInfo
from core.viz.reports.shell import MIXED_TITLE, ReportSection, render_report


def find_stored_runs(store: ResultStore, run_ids: Sequence[str]) -> list[RunInfo]:
    """The stored runs with these ids (a unique prefix is enough), in the order given, each once; unknown ids are
    an error."""
    runs = store.list_runs()
    chosen = []
    for wanted in run_ids:
        wanted = wanted.strip()
        matches = runs_named(runs, wanted)
        if not matches:
            raise LeakLensError(
                f"No stored run with id '{wanted}' in {store.path}; the Results page (details) lists the run ids."
            )
        if len(matches) > 1:
            raise LeakLensError(f"The id '{wanted}' matches {len(matches)} stored runs; give more of it.")
        if matches[0] not in chosen:  # the same run named twice (its id and a prefix) is reported once
            chosen.append(matches[0])
    return chosen


def _reportable() -> str:
    return ", ".join(f"{kind.label.lower()} ({kind.name})" for kind in KINDS if kind.sections is not None)


def stored_runs_report(store: ResultStore, runs: Sequence[RunInfo], *, title: str | None = None) -> str:
    """The self-contained report of finished stored runs, rebuilt from the store alone, in the order given.

    Each run is reported once: a run that is part of another run given too (the membership run holding a
    dataset-inference run's scores) is left out, since its owner's section shows it. Several runs of a kind that
    registers a comparison chart (membership: an AUROC heatmap) get it as the report's overview. Any kind without
    a verdict of its own (a ``delta`` run holds one problem set's losses, not the comparison) is an error that says
    what to do instead.
    """
    if not runs:
        raise LeakLensError("Choose at least one stored run to report.")
    parts = parts_of(runs)
    runs = [r for r in runs if r.run_id not in parts]
    opened: list[StoredResult] = []
    for run in runs:
        if kind_of(run.kind).sections is None:
            raise LeakLensError(
                f"Run {run.run_id} is a '{run.kind}' run; reports are built from stored {_reportable()} runs. "
                "A 'delta' run holds one problem set's losses: report the comparison that used it (the Results "
                "page lists it; `python -m core delta ...` stores one)."
            )
        opened.append(open_stored(store, run))
    sections = _sections(opened)
    kinds = [kind_of(name) for name in dict.fromkeys(s.kind for s in opened)]
    if title is None:
        title = (kinds[0].report_title if len(kinds) == 1 else None) or MIXED_TITLE
    intro = " ".join(kind.report_intro for kind in kinds if kind.report_intro)
    overview = next(
        (
            kind.compare([s.result for s in opened if s.kind == kind.name])
            for kind in kinds
            if kind.compare is not None and sum(s.kind == kind.name for s in opened) > 1
        ),
        None,
    )
    summary_first = len(opened) == 1 and kind_of(opened[0].kind).report_opens_with_summary
    return render_report(sections, title=title, intro=intro, overview=overview, summary_first=summary_first)


def _with_other_names(section: ReportSection, run: RunInfo) -> ReportSection:
    """A run reused for the same rows given under other names says so: the report names the file the user gave,
    not only the one that first produced the run."""
    others = [str(name) for name in run.meta.get("also_given_as", [])]
    if not others:
        return section
    line = f"the same rows were also given as {', '.join(others)}"
    return replace(section, meta=f"{section.meta} · {line}" if section.meta else line.capitalize())


def _sections(opened: Sequence[StoredResult]) -> list[ReportSection]:
    """The sections of each run in the order given, each kind's runs built together; a kind whose runs each give
    several sections (an audit: its summary, then its tests') is built run by run."""
    by_kind: dict[str, list[int]] = {}
    for index, stored in enumerate(opened):
        by_kind.setdefault(stored.kind, []).append(index)
    sections: list[list[ReportSection]] = [[] for _ in opened]
    for name, indexes in by_kind.items():
        build = kind_of(name).sections
        assert build is not None  # checked before opening
        together = build([(opened[i].result, opened[i].run) for i in indexes])
        if len(together) == len(indexes):
            for index, section in zip(indexes, together, strict=True):
                sections[index] = [_with_other_names(section, opened[index].run)]
            continue
        for index in indexes:
            own = build([(opened[index].result, opened[index].run)])
            sections[index] = [_with_other_names(own[0], opened[index].run), *own[1:]] if own else []
    return [section for run_sections in sections for section in run_sections]
