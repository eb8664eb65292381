"""Every kind of test and of stored run, registered once: its name in words, the page it belongs to, how a
finished run is rebuilt from the store alone (no model, no data files), its verdict, its report (sections,
CSV, title and intro, from its module in ``core.viz.reports``) and the chart that carries its verdict. The Home
page's cards, the app's navigation, the Results page (its run cards, the opened run, its folded tables), the
list of stored runs, the combined HTML report and ``python -m core report RUN_ID`` all read ``KINDS``: a new kind
of test adds one ``RunKind`` here (docs/contributing.md, "Adding a kind of test").

A kind with no verdict of its own (a ``delta`` run holds one problem set's losses; ``calibration`` holds fresh
passages' scores) is registered with its name only: it is listed, never opened as a story. The overlap search
writes its own result files instead of a stored run: it is registered for its page.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go

from core.audit.plan import EXTRACTION
from core.audit.run import KIND as AUDIT_KIND
from core.audit.run import Audit, audit_from_run
from core.benchmark_order.run import KIND as ORDER_KIND
from core.benchmark_order.run import order_test_from_run
from core.data.demo import pair_label
from core.dataset_inference.run import KIND as INFERENCE_KIND
from core.dataset_inference.run import inference_from_run
from core.errors import LeakLensError
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
from core.passage.reading import passage_verdict
from core.passage.stored import KIND as PASSAGE_KIND
from core.passage.stored import inspection_from_run
from core.stats.finding import Finding
from core.store.results import ResultStore, RunInfo
from core.store.stored_run import data_name
from core.viz.audit_plots import evidence_chart, extraction_chart
from core.viz.benchmark_order_plots import order_chart
from core.viz.dataset_inference_plots import held_out_scores
from core.viz.loss_delta_plots import delta_bars
from core.viz.mcq_plots import mcq_score_distribution
from core.viz.membership_plots import auroc_heatmap, detector_summary
from core.viz.passage_plots import verdict_strip
from core.viz.reports import audit as audit_report
from core.viz.reports import benchmark_order as order_report
from core.viz.reports import dataset_inference as inference_report
from core.viz.reports import loss_delta as loss_delta_report
from core.viz.reports import mcq as mcq_report
from core.viz.reports import membership as membership_report
from core.viz.reports import passage as passage_report
from core.viz.reports.shell import CsvFile, ReportSection

OVERLAP_KIND = "overlap"
"""The overlap search's name here: it keeps its results as files of its own, never as a stored run."""


def _meta_pair(first: str, second: str) -> Callable[[RunInfo], str]:
    """The data of a run that compares two sets named in its meta (``first`` vs ``second``)."""

    def label(run: RunInfo) -> str:
        a, b = run.meta.get(first), run.meta.get(second)
        return pair_label(str(a), str(b)) if a and b else data_name(run)

    return label


_comparison_sets = _meta_pair("test_name", "ref_name")
_inference_sets = _meta_pair("suspect", "validation")


@dataclass(frozen=True)
class PageCard:
    """A page of the dashboard: its card on the Home page and its entry in the navigation."""

    path: str
    """The page script, relative to the repository root (``pages/8_Benchmark_order.py``)."""
    title: str
    """The page's title, its sidebar name and its card's link (the page sets the same title)."""
    icon: str
    purpose: str
    """One or two plain sentences on the card: what the page answers."""
    ui_module: str | None = None
    """The ``ui`` module holding the page's renderers; its ``results_more(stored)``, when it has one, draws a
    stored run's folded tables and further charts on the Results page."""


@dataclass(frozen=True)
class RunKind:
    """One kind of test or stored run and everything the front ends need to show it."""

    name: str
    """The kind as stored (``RunInfo.kind``)."""
    label: str
    """The test in words, for cards, filters and tables."""
    rebuild: Callable[[ResultStore, RunInfo], Any] | None = None
    """The run's result from the store alone (raises ``LeakLensError`` when it cannot, starting with
    ``core.store.stored_run.finished_run``); None: no verdict of its own, so never a story."""
    finding: Callable[[Any], Finding] | None = None
    sections: Callable[[Sequence[tuple[Any, RunInfo]]], list[ReportSection]] | None = None
    """Report sections of several runs of this kind at once (one each, in order): runs of one kind may share
    naming (two membership runs on the same data are told apart by their model)."""
    csv: Callable[[Any, Finding, RunInfo], CsvFile] | None = None
    figure: Callable[[Any], go.Figure] | None = None
    """The chart that carries the verdict, first under it on the Results page."""
    figure_key: str = ""
    """That chart's widget key on the Results page (default ``results_KIND_figure``)."""
    compare: Callable[[Sequence[Any]], go.Figure] | None = None
    """A chart setting several runs of this kind side by side (the report's overview)."""
    data_label: Callable[[RunInfo], str] = data_name
    """The data a run is about, as people call it (demo titles, never a cache path)."""
    report_title: str | None = None
    """The report's title when every run in it is of this kind (else a general one)."""
    report_intro: str = ""
    """What the report's readers need to read this kind's numbers."""
    listed_per_model: bool = False
    """Its runs are listed one row per model, their sets joined (a model's loss-delta sets)."""
    page: PageCard | None = None
    """The page that runs this test (its Home card and navigation entry); None: no page of its own."""
    report_opens_with_summary: bool = False
    """A report of one such run opens with its first section as an executive summary (an audit's)."""

    @property
    def has_verdict(self) -> bool:
        return self.rebuild is not None

    @property
    def chart_key(self) -> str:
        """The verdict chart's widget key on the Results page."""
        return self.figure_key or f"results_{self.name}_figure"


@dataclass(frozen=True)
class OpenedAudit:
    """A stored audit with its parts' stored runs reopened (each as its own kind rebuilds it)."""

    audit: Audit
    parts: tuple[tuple[str, Any, RunInfo], ...]
    """(the test's key, its rebuilt result, its stored run), once per stored run, in the plan's order."""
    notes: tuple[str, ...] = ()
    """Parts whose stored run could not be reopened, and why."""


def open_audit(store: ResultStore, run: RunInfo) -> OpenedAudit:
    """The audit and its parts from the store alone; a part no longer stored is named, never silently left out."""
    audit = audit_from_run(store, run)
    parts: list[tuple[str, Any, RunInfo]] = []
    notes: list[str] = []
    seen: set[str] = set()
    for part in audit.parts:
        if not part.run_id or part.run_id in seen:
            continue
        seen.add(part.run_id)
        stored = store.get_run(part.run_id)
        kind = KIND_BY_NAME.get(part.run_kind or "")
        if stored is None or kind is None or kind.rebuild is None:
            notes.append(f"The stored run of {part.key} ({part.run_id}) is no longer in the results store.")
            continue
        try:
            parts.append((part.key, kind.rebuild(store, stored), stored))
        except LeakLensError as exc:
            notes.append(f"The stored run of {part.key} cannot be reopened: {exc}")
    return OpenedAudit(audit, tuple(parts), tuple(notes))


def audit_figure(opened: OpenedAudit) -> go.Figure:
    """The chart of the strongest evidence (that test's own chart); without evidence, every test's reading."""
    strongest = opened.audit.verdict.strongest
    items = opened.audit.items_extraction
    if strongest == EXTRACTION.key and items is not None:
        return extraction_chart(items)
    holder = opened.audit.part(strongest).run_id if strongest else None
    for _, result, stored in opened.parts:
        figure = KIND_BY_NAME[stored.kind].figure
        if stored.run_id == holder and figure is not None:
            return figure(result)
    return evidence_chart(opened.audit)


def audit_sections(items: Sequence[tuple[OpenedAudit, RunInfo]]) -> list[ReportSection]:
    """Each audit's executive summary, then each test's own section as its own report has it."""
    sections: list[ReportSection] = []
    for opened, _ in items:
        sections.append(audit_report.audit_summary_section(opened.audit))
        for _, result, stored in opened.parts:
            kind = KIND_BY_NAME[stored.kind]
            if kind.sections is not None:
                sections.extend(kind.sections([(result, stored)]))
        extraction = audit_report.extraction_section(opened.audit)
        if extraction is not None:
            sections.append(extraction)
    return sections


KINDS: tuple[RunKind, ...] = (
    RunKind(
        AUDIT_KIND,
        "Audit",
        open_audit,
        lambda opened: opened.audit.finding,
        sections=audit_sections,
        csv=lambda opened, finding, run: audit_report.audit_csv(opened.audit, finding, data_name(run)),
        figure=audit_figure,
        figure_key="results_audit_chart",
        report_title=audit_report.TITLE,
        report_intro=audit_report.INTRO,
        report_opens_with_summary=True,
        page=PageCard(
            "pages/0_Audit_a_model.py",
            "Audit a model",
            ":material/verified:",
            "Has this model seen this benchmark? Every test that fits runs on it, and one verdict says what they "
            "found together.",
            ui_module="ui.audit",
        ),
    ),
    RunKind(
        MEMBERSHIP_KIND,
        "Membership benchmark",
        result_from_store,
        membership_finding,
        sections=lambda items: membership_report.membership_sections([result for result, _ in items]),
        csv=lambda result, finding, run: membership_report.membership_csv(result, finding, data_name(run)),
        figure=detector_summary,
        figure_key="results_bars",
        compare=auroc_heatmap,
        report_title=membership_report.TITLE,
        report_intro=membership_report.INTRO,
        page=PageCard(
            "pages/2_Membership_benchmark.py",
            "Membership benchmark",
            ":material/dataset:",
            "Score a labelled dataset (members vs non-members) with many detectors and compare how well each "
            "separates them.",
            ui_module="ui.membership",
        ),
    ),
    RunKind(
        MCQ_KIND,
        "Multiple choice",
        mcq_report_from_run,
        mcq_finding,
        sections=lambda items: [
            mcq_report.mcq_section(report, model=str(run.meta.get("model") or run.model), benchmark=data_name(run))
            for report, run in items
        ],
        csv=lambda report, finding, run: mcq_report.mcq_csv(report, finding, data_name(run), run.model),
        figure=lambda report: mcq_score_distribution(report, mcq_report.VERDICT_PROBE),
        figure_key="results_mcq_completion",
        report_title=mcq_report.TITLE,
        report_intro=mcq_report.INTRO,
        page=PageCard(
            "pages/4_MCQ_memorisation.py",
            "MCQ memorisation",
            ":material/quiz:",
            "Test whether the model completes multiple-choice options it should not know, and whether shuffling "
            "them changes its accuracy.",
            ui_module="ui.mcq",
        ),
    ),
    RunKind(
        COMPARISON_KIND,
        "Loss-delta comparison",
        report_from_comparison,
        leakage_finding,
        sections=lambda items: [loss_delta_report.leakage_section(report) for report, _ in items],
        csv=lambda report, finding, run: loss_delta_report.comparison_csv(
            report, finding, _comparison_sets(run), run.model
        ),
        figure=delta_bars,
        figure_key="results_delta_bars",
        data_label=_comparison_sets,
        report_title=loss_delta_report.TITLE,
        report_intro=loss_delta_report.INTRO,
        page=PageCard(
            "pages/3_Loss_delta.py",
            "Loss delta",
            ":material/compare_arrows:",
            "Compare the model's loss on a benchmark with its loss on freshly written reference text.",
            ui_module="ui.loss_delta",
        ),
    ),
    RunKind(
        INFERENCE_KIND,
        "Dataset inference",
        inference_from_run,
        lambda inference: inference.finding,
        sections=lambda items: [inference_report.inference_section(inference) for inference, _ in items],
        csv=lambda inference, finding, run: inference_report.inference_csv(inference, finding, _inference_sets(run)),
        figure=held_out_scores,
        figure_key="results_inference_scores",
        data_label=_inference_sets,
        report_title=inference_report.TITLE,
        report_intro=inference_report.INTRO,
        page=PageCard(
            "pages/6_Dataset_inference.py",
            "Dataset inference",
            ":material/fact_check:",
            "Ask whether the model trained on a whole set of texts (a book, a benchmark, a corpus) and get a "
            "p-value, checked against texts from the same source that it never saw.",
            ui_module="ui.dataset_inference",
        ),
    ),
    RunKind(
        ORDER_KIND,
        "Benchmark order test",
        order_test_from_run,
        lambda test: test.finding,
        sections=lambda items: [order_report.order_section(test) for test, _ in items],
        csv=lambda test, finding, run: order_report.order_csv(test, finding, data_name(run)),
        figure=order_chart,
        figure_key="results_order_chart",
        report_title=order_report.TITLE,
        report_intro=order_report.INTRO,
        page=PageCard(
            "pages/8_Benchmark_order.py",
            "Benchmark order test",
            ":material/format_list_numbered:",
            "Ask whether the model read a benchmark file: does it find the examples likelier in the file's own "
            "order than shuffled? A model that never saw the file has no reason to.",
            ui_module="ui.benchmark_order",
        ),
    ),
    RunKind(
        PASSAGE_KIND,
        "Passage inspection",
        inspection_from_run,
        lambda inspection: passage_verdict(inspection, 0),
        sections=lambda items: [
            section
            for inspection, _ in items
            for section in passage_report.passage_sections(
                inspection.passages, inspection.verdicts, model=inspection.model
            )
        ],
        csv=lambda inspection, finding, run: passage_report.stored_scores_csv(inspection),
        figure=verdict_strip,
        report_title=passage_report.TITLE,
        report_intro=passage_report.INTRO,
        page=PageCard(
            "pages/1_Inspect_a_passage.py",
            "Inspect a passage",
            ":material/search:",
            "Paste one passage and see, token by token, how confidently the model predicts it, with every "
            "detector's score.",
            ui_module="ui.passage_view",
        ),
    ),
    RunKind(
        OVERLAP_KIND,
        "Overlap search",
        page=PageCard(
            "pages/5_Overlap_search.py",
            "Overlap search",
            ":material/manage_search:",
            "Find test items that appear (nearly) verbatim in a training corpus, report them and decontaminate.",
            ui_module="ui.overlap",
        ),
    ),
    RunKind(DELTA_KIND, "Loss delta", listed_per_model=True),
    RunKind(FRESH_KIND, "Calibration"),
)
KIND_BY_NAME: dict[str, RunKind] = {kind.name: kind for kind in KINDS}
STORY_KINDS: tuple[str, ...] = tuple(kind.name for kind in KINDS if kind.has_verdict)
"""Kinds whose finished run ends in a verdict of its own: a story on the Results page and in the report."""
TEST_PAGES: tuple[PageCard, ...] = tuple(sorted((kind.page for kind in KINDS if kind.page), key=lambda p: p.path))
"""The pages that run a test, in the order of their file names (the Home page's cards, before Results)."""


def kind_of(name: str) -> RunKind:
    """The registered kind, or a bare one named as stored (a kind this LeakLens does not know)."""
    return KIND_BY_NAME.get(name) or RunKind(name, name)


def kind_label(name: str) -> str:
    """The test's name in words (unknown kinds as stored)."""
    return kind_of(name).label
