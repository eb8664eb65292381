"""Every kind of stored run, registered once: its name in words, how a finished run is rebuilt from the store
alone (no model, no data files), its verdict, its report section, its CSV export and the chart that carries
its verdict. The Results page, its run cards, the list of stored runs, the combined HTML report and
``python -m core report RUN_ID`` all read ``KINDS``; a new kind of test adds one ``RunKind`` here.

A kind with no verdict of its own (a ``delta`` run holds one problem set's losses; ``calibration`` holds fresh
passages' scores) is registered with its name only: it is listed, never opened as a story.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go

from core.benchmark_order.run import KIND as ORDER_KIND
from core.benchmark_order.run import order_test_from_run
from core.data.demo import name_label, pair_label
from core.dataset_inference.run import KIND as INFERENCE_KIND
from core.dataset_inference.run import inference_from_run
from core.loss_delta.comparison import COMPARISON_KIND, report_from_comparison
from core.loss_delta.finding import leakage_finding
from core.loss_delta.stored import KIND as DELTA_KIND
from core.mcq.finding import mcq_finding
from core.mcq.stored import KIND as MCQ_KIND
from core.mcq.stored import mcq_report_from_run
from core.membership.benchmark import KIND as MEMBERSHIP_KIND
from core.membership.benchmark import result_from_store
from core.membership.finding import membership_finding
from core.passage.calibration import FRESH_KIND
from core.passage.reading import findings_of, passage_verdict
from core.passage.stored import KIND as PASSAGE_KIND
from core.passage.stored import inspection_from_run
from core.stats.finding import Finding
from core.store.results import ResultStore, RunInfo
from core.viz.benchmark_order_plots import order_chart
from core.viz.dataset_inference_plots import held_out_scores
from core.viz.loss_delta_plots import delta_bars
from core.viz.mcq_plots import mcq_score_distribution
from core.viz.membership_plots import auroc_heatmap, detector_summary
from core.viz.passage_export import scores_csv
from core.viz.passage_plots import verdict_strip
from core.viz.report import (
    DEFAULT_TITLE,
    MEMBERSHIP_INTRO,
    ORDER_INTRO,
    ORDER_TITLE,
    PASSAGE_INTRO,
    PASSAGE_TITLE,
    CsvFile,
    ReportSection,
    comparison_csv,
    inference_csv,
    inference_section,
    leakage_section,
    mcq_csv,
    mcq_section,
    membership_csv,
    membership_sections,
    order_csv,
    order_section,
    passage_sections,
)


def _stored_name(run: RunInfo) -> str:
    return name_label(run.dataset or str(run.meta.get("dataset", "")))


def _meta_pair(first: str, second: str) -> Callable[[RunInfo], str]:
    """The data of a run that compares two sets named in its meta (``first`` vs ``second``)."""

    def label(run: RunInfo) -> str:
        a, b = run.meta.get(first), run.meta.get(second)
        return pair_label(str(a), str(b)) if a and b else _stored_name(run)

    return label


_comparison_sets = _meta_pair("test_name", "ref_name")
_inference_sets = _meta_pair("suspect", "validation")


@dataclass(frozen=True)
class RunKind:
    """One kind of stored run and everything the front ends need to show it."""

    name: str
    """The kind as stored (``RunInfo.kind``)."""
    label: str
    """The test in words, for cards, filters and tables."""
    rebuild: Callable[[ResultStore, RunInfo], Any] | None = None
    """The run's result from the store alone (raises ``LeakLensError`` when it cannot); None: no verdict of its
    own, so never a story."""
    finding: Callable[[Any], Finding] | None = None
    sections: Callable[[Sequence[tuple[Any, RunInfo]]], list[ReportSection]] | None = None
    """Report sections of several runs of this kind at once (one each, in order): runs of one kind may share
    naming (two membership runs on the same data are told apart by their model)."""
    csv: Callable[[Any, Finding, RunInfo], CsvFile] | None = None
    figure: Callable[[Any], go.Figure] | None = None
    """The chart that carries the verdict, first under it on the Results page."""
    compare: Callable[[Sequence[Any]], go.Figure] | None = None
    """A chart setting several runs of this kind side by side (the report's overview)."""
    data_label: Callable[[RunInfo], str] = _stored_name
    """The data a run is about, as people call it (demo titles, never a cache path)."""
    report_title: str | None = None
    """The report's title when every run in it is of this kind (else a general one)."""
    report_intro: str = ""
    """What the report's readers need to read this kind's numbers."""
    listed_per_model: bool = False
    """Its runs are listed one row per model, their sets joined (a model's loss-delta sets)."""

    @property
    def has_verdict(self) -> bool:
        return self.rebuild is not None


KINDS: tuple[RunKind, ...] = (
    RunKind(
        MEMBERSHIP_KIND,
        "Membership benchmark",
        result_from_store,
        membership_finding,
        sections=lambda items: membership_sections([result for result, _ in items]),
        csv=lambda result, finding, run: membership_csv(result, finding, _stored_name(run)),
        figure=detector_summary,
        compare=auroc_heatmap,
        report_title=DEFAULT_TITLE,
        report_intro=MEMBERSHIP_INTRO,
    ),
    RunKind(
        MCQ_KIND,
        "Multiple choice",
        mcq_report_from_run,
        mcq_finding,
        sections=lambda items: [
            mcq_section(report, model=str(run.meta.get("model") or run.model), benchmark=_stored_name(run))
            for report, run in items
        ],
        csv=lambda report, finding, run: mcq_csv(report, finding, _stored_name(run), run.model),
        figure=lambda report: mcq_score_distribution(report, "completion"),
    ),
    RunKind(
        COMPARISON_KIND,
        "Loss-delta comparison",
        report_from_comparison,
        leakage_finding,
        sections=lambda items: [leakage_section(report) for report, _ in items],
        csv=lambda report, finding, run: comparison_csv(report, finding, _comparison_sets(run), run.model),
        figure=delta_bars,
        data_label=_comparison_sets,
    ),
    RunKind(
        INFERENCE_KIND,
        "Dataset inference",
        inference_from_run,
        lambda inference: inference.finding,
        sections=lambda items: [inference_section(inference) for inference, _ in items],
        csv=lambda inference, finding, run: inference_csv(inference, finding, _inference_sets(run)),
        figure=held_out_scores,
        data_label=_inference_sets,
    ),
    RunKind(
        ORDER_KIND,
        "Benchmark order test",
        order_test_from_run,
        lambda test: test.finding,
        sections=lambda items: [order_section(test) for test, _ in items],
        csv=lambda test, finding, run: order_csv(test, finding, _stored_name(run)),
        figure=order_chart,
        report_title=ORDER_TITLE,
        report_intro=ORDER_INTRO,
    ),
    RunKind(
        PASSAGE_KIND,
        "Passage inspection",
        inspection_from_run,
        lambda inspection: passage_verdict(inspection, 0),
        sections=lambda items: [
            section
            for inspection, _ in items
            for section in passage_sections(inspection.passages, inspection.verdicts, model=inspection.model)
        ],
        csv=lambda inspection, finding, run: CsvFile(
            "Detector scores (CSV)", "leaklens_passage_scores.csv", scores_csv(inspection, findings_of(inspection))
        ),
        figure=verdict_strip,
        report_title=PASSAGE_TITLE,
        report_intro=PASSAGE_INTRO,
    ),
    RunKind(DELTA_KIND, "Loss delta", listed_per_model=True),
    RunKind(FRESH_KIND, "Calibration"),
)
KIND_BY_NAME: dict[str, RunKind] = {kind.name: kind for kind in KINDS}
STORY_KINDS: tuple[str, ...] = tuple(kind.name for kind in KINDS if kind.has_verdict)
"""Kinds whose finished run ends in a verdict of its own: a story on the Results page and in the report."""


def kind_of(name: str) -> RunKind:
    """The registered kind, or a bare one named as stored (a kind this LeakLens does not know)."""
    return KIND_BY_NAME.get(name) or RunKind(name, name)


def kind_label(name: str) -> str:
    """The test's name in words (unknown kinds as stored)."""
    return kind_of(name).label
