"""A self-contained HTML report of LeakLens results, for people who do not run the app.

It opens with what was found (each run's verdict banner), then the chart that shows it, then the numbers
and caveats. One file: the Plotly library is embedded once, inline, so the figures work offline and the
file can be mailed or archived; every figure sets its own colours (``core.viz.style``), so nothing depends
on the app's theme; all text from data (dataset names, model specs, method labels) is HTML-escaped.
Membership benchmark runs, loss-delta runs, multiple-choice runs, benchmark-order runs, inspected passages and
overlap searches each become a section; ``leakage_report``, ``order_report``, ``passage_report`` and
``overlap_report`` build the whole file for one run of those kinds; ``core.results.report`` builds the report
of stored runs from these sections. The ``*_csv`` functions are the CSV exports of a run: every row starts with
its verdict, model and data (``core.viz.csv_export``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from html import escape
from typing import Any

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

from core.benchmark_order.run import OrderTest
from core.data.demo import dataset_label, pair_label
from core.dataset_inference.run import DatasetInference
from core.errors import LeakLensError
from core.loss_delta.delta import LeakageReport
from core.loss_delta.finding import leakage_finding
from core.mcq.finding import mcq_finding, score_drop
from core.mcq.study import MCQReport
from core.membership.benchmark import BenchmarkResult
from core.membership.finding import membership_finding, wording_rivals_detectors
from core.overlap.finding import overlap_finding
from core.overlap.run import SearchOutcome, match_location
from core.passage.extraction_finding import extraction_sentence
from core.passage.inspection import InspectedPassage
from core.passage.placement import PassagePlacement
from core.passage.summary import reportable_scores
from core.passage.verdict import PassageVerdict
from core.stats.finding import Finding
from core.viz.banner import banner_html, finding_details_html
from core.viz.benchmark_order_plots import order_chart
from core.viz.csv_export import CONTEXT_COLUMNS, csv_text, result_csv
from core.viz.dataset_inference_plots import detector_weights, held_out_scores, split_p_values
from core.viz.extraction_panel import extraction_panel_html
from core.viz.loss_delta_plots import delta2_bars, delta_bars, loss_change_html, problem_scatter
from core.viz.mcq_plots import PROBE_TITLES, mcq_score_distribution, rank_histogram
from core.viz.membership_plots import auroc_bars, auroc_heatmap, column_labels, roc_overlay, top_methods
from core.viz.overlap_plots import contamination_heatmap, highlighted_html, item_overlap_chart
from core.viz.passage_plots import placement_strip
from core.viz.style import FONT_FAMILY, TEXT_COLOUR
from core.viz.token_curve import confidence_curve, confidence_figure
from core.viz.token_heatmap import token_heatmap_block

DEFAULT_TITLE = "LeakLens membership benchmark report"
MIXED_TITLE = "LeakLens report"
LEAKAGE_TITLE = "LeakLens loss-delta report"
PASSAGE_TITLE = "LeakLens passage inspection report"
OVERLAP_TITLE = "LeakLens overlap search report"
BEST_MATCHES = 10
"""Matches listed in an overlap report, most overlap first."""
CSV_COLUMNS = [
    "dataset",
    "model",
    "method",
    "label",
    "auroc",
    "ci_low",
    "ci_high",
    "tpr_at_1_fpr",
    "tpr_at_5_fpr",
    "n",
    "run_id",
]
PLOTLY_CONFIG = {"displaylogo": False, "responsive": True}

_STYLE = f"""
body {{ font-family: {FONT_FAMILY}; margin: 2rem auto; max-width: 1200px; color: {TEXT_COLOUR};
       background: #ffffff; padding: 0 1rem; line-height: 1.45; }}
h1 {{ margin-bottom: 0.6rem; }} h2 {{ margin-top: 2.4rem; border-top: 1px solid #e3e8ec; padding-top: 1.2rem; }}
.meta {{ color: #5b6670; margin-top: 0; }}
.findings {{ margin-bottom: 1rem; }}
.leaklens-finding a {{ text-decoration: none; }}
table {{ border-collapse: collapse; margin: 0.5rem 0 1.5rem; font-size: 0.9rem; }}
th, td {{ border: 1px solid #dde3e8; padding: 0.25rem 0.6rem; text-align: right; }}
th {{ background: #f2f6f8; }}
th:first-child, td:first-child {{ text-align: left; }}
tr.baseline td {{ background: #f2f2f2; font-style: italic; }} tr.ensemble td {{ background: #eaf6f8; }}
.note {{ background: #eef5fb; border-left: 4px solid #4c78a8; padding: 0.5rem 0.8rem; }}
.label {{ font-weight: 600; margin: 0.8rem 0 0.2rem; }}
ul.caveats {{ color: #5b6670; font-size: 0.92rem; }}
.figure {{ margin: 0.6rem 0 1rem; }}
mark.ll-match {{ background: #cfe3f6; color: {TEXT_COLOUR}; padding: 0 0.1rem; border-radius: 0.15rem; }}
td.text, th.text {{ text-align: left; max-width: 44rem; white-space: pre-wrap; word-break: break-word; }}
"""


@dataclass(frozen=True)
class ReportSection:
    """One run in the report: its verdict, the charts that show it (the evidence chart first), the numbers."""

    heading: str
    finding: Finding
    figures: tuple[go.Figure, ...]
    meta: str = ""
    """One plain line under the heading (sizes, run id); escaped when rendered."""
    details: str = ""
    """Tables and notes as HTML, built in this module from escaped data."""
    lead: str = ""
    """HTML shown right under the evidence chart, before the finding's details: a small table the verdict rests
    on (built by ``core.viz`` from escaped data)."""


def results_csv(results: Sequence[BenchmarkResult]) -> str:
    """Every membership run's table rows (methods, blind baseline, ensemble) as CSV text, each row led by its
    run's verdict, model and data (``core.viz.csv_export.CONTEXT_COLUMNS``), then the AUROC with its interval."""
    rows = []
    for result, data in zip(results, column_labels(results, with_model=False), strict=True):
        finding = membership_finding(result)
        context = {"verdict": finding.level, "verdict_headline": finding.headline, "model": result.model, "data": data}
        rows += [{**row, **context} for row in result.table_rows()]
    return csv_text(rows, [*CONTEXT_COLUMNS, *(c for c in CSV_COLUMNS if c != "model")])


@dataclass(frozen=True)
class CsvFile:
    """A download: its button label (what it holds), file name and text."""

    label: str
    file_name: str
    text: str


def membership_csv(result: BenchmarkResult, finding: Finding, data: str) -> CsvFile:
    """AUROC per detector of one membership run."""
    rows = [{k: row[k] for k in CSV_COLUMNS if k not in ("dataset", "model")} for row in result.table_rows()]
    return CsvFile(
        "AUROC per detector (CSV)",
        "leaklens_membership_auroc.csv",
        result_csv(rows, finding=finding, model=result.model, data=data),
    )


def inference_csv(inference: DatasetInference, finding: Finding, data: str) -> CsvFile:
    """Each detector's AUROC between the two sets and its weight in the combined score."""
    rows = [
        {
            "detector": row["label"],
            "method": row["method"],
            "auroc": row["auroc"],
            "ci_low": row["ci_low"],
            "ci_high": row["ci_high"],
            "weight": inference.result.weights.get(row["method"]),
        }
        for row in inference.scores.table_rows()
    ]
    return CsvFile(
        "Each detector's AUROC and weight (CSV)",
        "leaklens_dataset_inference.csv",
        result_csv(rows, finding=finding, model=inference.model, data=data),
    )


def comparison_csv(report: LeakageReport, finding: Finding, data: str, model: str) -> CsvFile:
    """The loss delta of each model of a loss-delta comparison."""
    rows = [
        {
            "scored_model": m.model,
            "base_model": m.base_model or "",
            "l_test": m.stats.l_test,
            "l_ref": m.stats.l_ref,
            "delta": m.stats.delta,
            "ci_low": m.stats.ci[0],
            "ci_high": m.stats.ci[1],
            "p_value": m.stats.p_value,
            "delta2": m.delta2,
        }
        for m in report.models
    ]
    return CsvFile(
        "Loss delta per model (CSV)",
        "leaklens_loss_delta.csv",
        result_csv(rows, finding=finding, model=model, data=data),
    )


def mcq_csv(report: MCQReport, finding: Finding, data: str, model: str) -> CsvFile:
    """The score drop of each probe of a multiple-choice run."""
    rows = []
    for kind in ("completion", "next_token"):
        drop, (low, high) = score_drop(report, kind)
        rows.append(
            {
                "probe": PROBE_TITLES[kind],
                "options": report.original.n_options,
                "published_order": report.original.summary(kind).mean,
                "shuffled": report.shuffled.summary(kind).mean,
                "drop": drop,
                "ci_low": low,
                "ci_high": high,
            }
        )
    return CsvFile(
        "Score drop per probe (CSV)",
        "leaklens_multiple_choice.csv",
        result_csv(rows, finding=finding, model=model, data=data),
    )


def _fmt(value: float | None, spec: str = ".3f") -> str:
    return "–" if value is None or not math.isfinite(value) else format(value, spec)


def _table(header: Sequence[str], rows: Iterable[tuple[Sequence[str], str]]) -> str:
    """An HTML table; cells are plain text (escaped here), each row with an optional CSS class."""
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join(
        ("<tr>" if not css else f'<tr class="{escape(css)}">')
        + "".join(f"<td>{escape(c)}</td>" for c in cells)
        + "</tr>"
        for cells, css in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _figure_html(figure: go.Figure) -> str:
    """A figure's div and its drawing call; the library itself is in the page head, once."""
    return f'<div class="figure">{figure.to_html(full_html=False, include_plotlyjs=False, config=PLOTLY_CONFIG)}</div>'


# ------------------------------------------------------------------------------------------ membership


def _membership_table(result: BenchmarkResult) -> str:
    rows = []
    for row in result.table_rows():
        css = {"blind_baseline": "baseline", "ensemble": "ensemble"}.get(row["method"], "")
        ci = "–" if row["ci_low"] is None else f"{row['ci_low']:.3f}–{row['ci_high']:.3f}"
        cells = (
            f"{row['label']} ({row['method']})",
            _fmt(row["auroc"]),
            ci,
            _fmt(row["tpr_at_1_fpr"]),
            _fmt(row["tpr_at_5_fpr"]),
        )
        rows.append((cells, css))
    return _table(("method", "AUROC", "95% CI", "TPR@1%FPR", "TPR@5%FPR"), rows)


def _baseline_warning(result: BenchmarkResult) -> str:
    if not wording_rivals_detectors(result):
        return ""
    return (
        '<p class="note">The model-free blind baseline, above chance, separates this data at least as well as '
        "every detector: the labels are predictable from the wording alone, so these AUROCs say little about "
        "what the model saw.</p>"
    )


def membership_sections(results: Sequence[BenchmarkResult]) -> list[ReportSection]:
    """One section per benchmark run: AUROC bars (the evidence), ROC curves, then the full table."""
    sections = []
    for result, heading in zip(results, column_labels(results, with_model=True), strict=True):
        members = sum(result.labels)
        details = [_baseline_warning(result), _membership_table(result)]
        details += [f'<p class="note">{escape(note)}</p>' for note in result.notes]
        # traceability for whoever reruns it, kept out of the lines a stakeholder reads first
        details.append(f'<p class="meta">Stored as run {escape(result.run_id)}.</p>')
        sections.append(
            ReportSection(
                heading=heading,
                finding=membership_finding(result),
                figures=(auroc_bars(result), roc_overlay(result, top_methods(result))),
                meta=f"Membership benchmark · {result.n} texts ({members} members)",
                details="".join(details),
            )
        )
    return sections


# ------------------------------------------------------------------------------------------ loss delta


def leakage_section(report: LeakageReport) -> ReportSection:
    """Loss bars with Δ per model (the evidence), how fine-tuning moved each set's loss (with a base model), Δ²
    against base models, per-problem losses, the table."""
    first = report.models[0].stats
    figures = [delta_bars(report)]
    if any(m.delta2 is not None for m in report.models):
        figures.append(delta2_bars(report))
    figures += [problem_scatter(report, m.model) for m in report.models]
    rows = [
        (
            (
                m.model,
                m.base_model or "–",
                _fmt(m.stats.l_test),
                _fmt(m.stats.l_ref),
                _fmt(m.stats.delta, "+.3f"),
                f"{m.stats.ci[0]:+.3f} to {m.stats.ci[1]:+.3f}",
                _fmt(m.stats.p_value, ".2g"),
                _fmt(m.delta2, "+.3f") if m.delta2 is not None else "–",
            ),
            "",
        )
        for m in report.models
    ]
    details = [_table(("model", "base model", "L_test", "L_ref", "Δ", "Δ 95% CI", "p", "Δ²"), rows)]
    if report.flagged:
        details.append('<p class="label">Reference problems that may be unfit as a reference</p>')
        flagged = [((f.task_id, "; ".join(f.reasons)), "") for f in report.flagged]
        details.append(_table(("task id", "reasons"), flagged))
    pairing = "paired by task id" if report.paired else "unpaired"
    return ReportSection(
        heading=f"Loss delta · {pair_label(report.test_name, report.ref_name)}",
        finding=leakage_finding(report),
        figures=tuple(figures),
        meta=(
            f"Loss-delta test · {first.n_test} benchmark and {first.n_ref} reference problems · {pairing} · "
            f"significance test: {report.test_used}"
        ),
        details="".join(details),
        lead=loss_change_html(report),
    )


def leakage_report(report: LeakageReport, *, title: str = LEAKAGE_TITLE) -> str:
    """The self-contained report of one loss-delta run."""
    return render_report([leakage_section(report)], title=title, intro=LEAKAGE_INTRO)


LEAKAGE_INTRO = (
    "Δ = L_test − L_ref: mean loss on the benchmark minus mean loss on the reference problems. Below zero, the "
    "model finds the benchmark (or its style) easier than the reference; item-level claims need the membership tests."
)


# ---------------------------------------------------------------------------------------- dataset inference

INFERENCE_TITLE = "LeakLens dataset inference report"
INFERENCE_INTRO = (
    "Dataset inference tests a set, not a text: a combination of every detector's score, learnt on half of each "
    "set and tested on the other half over several random splits, gives one p-value (twice the median split "
    "p-value). It holds only if the validation texts come from the same distribution as the suspect texts."
)


def inference_section(inference: DatasetInference) -> ReportSection:
    """Held-out score distributions (the evidence), split p-values, detector weights, then each detector alone."""
    result = inference.result
    rows = [
        ((row["label"], _fmt(row["auroc"]), f"{_fmt(row['ci_low'])}–{_fmt(row['ci_high'])}"), "")
        for row in inference.scores.table_rows()
        if row["auroc"] is not None
    ]
    details = '<p class="label">Each detector alone: AUROC, suspect vs validation</p>' + _table(
        ("detector", "AUROC", "95% CI"), rows
    )
    return ReportSection(
        heading=f"Dataset inference · {pair_label(inference.suspect, inference.validation)} · {inference.model}",
        finding=inference.finding,
        figures=(held_out_scores(inference), split_p_values(inference), detector_weights(inference)),
        meta=(
            f"Dataset inference · {result.n_suspect} suspect and {result.n_validation} validation texts · "
            f"{len(result.split_p_values)} random splits (seed {result.seed}) · p = {result.p_value:.2g}"
        ),
        details=details,
    )


def inference_report(inference: DatasetInference, *, title: str = INFERENCE_TITLE) -> str:
    """The self-contained report of one dataset-inference run."""
    return render_report([inference_section(inference)], title=title, intro=INFERENCE_INTRO)


# ---------------------------------------------------------------------------------------- passage inspection


def _placement_table(placement: PassagePlacement) -> str:
    rows = [
        (
            (
                m.label,
                f"{m.score:.3f}",
                f"{m.percentile:.0f}%",
                f"{m.n_at_least} of {m.n_compared}",
                f"{m.chance:.3f}",
                m.level,
            ),
            "",
        )
        for m in placement.methods
    ]
    return _table(
        (
            "method",
            "score",
            "more predictable than",
            "fresh passages scoring at least as high",
            "chance if fresh",
            "level",
        ),
        rows,
    )


def _scores_table(passage: InspectedPassage) -> str:
    scores = reportable_scores(passage.analysis.scores, passage.analysis.records.n_tokens)
    rows = [((key, _fmt(value, ".4f")), "") for key, value in sorted(scores.items())]
    return _table(("method", "score (higher = more likely seen)"), rows)


def passage_section(passage: InspectedPassage, verdict: PassageVerdict, *, model: str) -> ReportSection:
    """One inspected passage: its place among fresh passages and its continuation (the evidence), token
    confidence, coloured tokens."""
    records = passage.analysis.records
    placement = verdict.placement
    figures = [placement_strip(m, passage.name) for m in placement.methods]
    figures.append(confidence_figure([confidence_curve(records, passage.name)]))
    low, high = placement.token_range
    details = [
        '<p class="label">How predictable each token was</p>',
        f'<div class="figure">{token_heatmap_block(records)}</div>',
        '<p class="label">Against freshly written passages of similar length</p>',
        _placement_table(placement),
        '<p class="label">Every method\'s score</p>',
        _scores_table(passage),
    ]
    if verdict.view is not None and verdict.reading is not None:
        panel = extraction_panel_html(verdict.view, extraction_sentence(verdict.reading, verdict.view))
        details[:0] = ['<p class="label">Given the first half, what the model wrote</p>', f"<div>{panel}</div>"]
    elif verdict.extraction_note:
        details.insert(0, f'<p class="note">{escape(verdict.extraction_note)}</p>')
    if passage.n_dropped:
        details.insert(
            0,
            f'<p class="note">Only the first {records.n_tokens} tokens were scored; '
            f"{passage.n_dropped_text} more were left out.</p>",
        )
    return ReportSection(
        heading=f"Passage inspection · {passage.name} · {model}",
        finding=verdict.finding,
        figures=tuple(figures),
        meta=(
            f"Passage inspection · {records.n_tokens} tokens · perplexity {passage.analysis.perplexity:.1f} · "
            f"compared with {placement.n_similar} of {placement.n_calibration} freshly written passages "
            f"({low}–{high} tokens)"
        ),
        details="".join(details),
    )


def passage_sections(
    passages: Sequence[InspectedPassage], verdicts: Sequence[PassageVerdict], *, model: str
) -> list[ReportSection]:
    """One section per inspected passage (the Inspect page compares one or two)."""
    if len(passages) != len(verdicts):
        raise LeakLensError(
            f"{len(passages)} passage(s) but {len(verdicts)} verdict(s): give every passage its placement among "
            "the fresh passages and its continuation (core.passage.verdict.judge_passages) first."
        )
    return [passage_section(p, v, model=model) for p, v in zip(passages, verdicts, strict=True)]


PASSAGE_INTRO = (
    "Each passage is scored by the model and placed among passages freshly written for LeakLens (which no model "
    "can have trained on) of similar length: far more predictable than all of them is a sign of memorisation. "
    "The model is also given each passage's first half: writing the rest word for word, further than it "
    "continues any fresh passage, is the plainest sign of all."
)


def passage_report(
    passages: Sequence[InspectedPassage],
    verdicts: Sequence[PassageVerdict],
    *,
    model: str,
    title: str = PASSAGE_TITLE,
) -> str:
    """The self-contained report of one or two inspected passages."""
    return render_report(passage_sections(passages, verdicts, model=model), title=title, intro=PASSAGE_INTRO)


# --------------------------------------------------------------------------------------------- overlap


def _matches_table(outcome: SearchOutcome, limit: int) -> str:
    best = outcome.best(limit)
    if not best:
        return '<p class="meta">No test item shares text with the training data.</p>'
    head = (
        "<th>test item</th><th>eval set</th><th>overlap</th><th>best training document</th>"
        '<th class="text">test text (shared text marked)</th>'
    )
    body = "".join(
        f"<tr><td>{escape(m.test_id)}</td><td>{escape(m.eval_name)}</td><td>{m.value:.2f}</td>"
        f"<td>{escape(match_location(m))}</td>"
        f'<td class="text">{highlighted_html(m.test_text, m.test_spans)}</td></tr>'
        for m in best
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def overlap_section(outcome: SearchOutcome, *, limit: int = BEST_MATCHES) -> ReportSection:
    """An overlap search as its page shows it: each item's overlap (what the verdict counts), the eval × training
    heatmap when there are several pairs to compare, then the best matches, text marked."""
    report = outcome.report
    n_items = sum(report.counts.values())
    details = [
        f'<p class="label">Best matches ({min(limit, outcome.n_matching)} of {outcome.n_matching})</p>',
        _matches_table(outcome, limit),
    ]
    if outcome.skipped:
        details.append(f'<p class="note">{len(outcome.skipped)} test row(s) were skipped (no text or unreadable).</p>')
    return ReportSection(
        heading=f"Overlap search · {', '.join(report.evals)} in {', '.join(report.trains)}",
        finding=overlap_finding(report),
        figures=(
            item_overlap_chart(outcome.matches),
            *((contamination_heatmap(report),) if len(report.evals) * len(report.trains) > 1 else ()),
        ),
        meta=f"Overlap search · {n_items} test items · {outcome.n_matching} (item, training set) pairs with overlap",
        details="".join(details),
    )


OVERLAP_INTRO = (
    "Each test item is searched in the training data; its overlap is the share of its text found in the best "
    "training document (1.0 = a verbatim copy). Shared text is not proof of training."
)


def overlap_report(outcome: SearchOutcome, *, title: str = OVERLAP_TITLE, limit: int = BEST_MATCHES) -> str:
    """The self-contained report of one overlap search."""
    return render_report([overlap_section(outcome, limit=limit)], title=title, intro=OVERLAP_INTRO)


# -------------------------------------------------------------------------------------- multiple choice


def mcq_section(report: MCQReport, *, model: str, benchmark: str) -> ReportSection:
    """Options completed per question, published order vs shuffled (the evidence), then the order test."""
    figures = [mcq_score_distribution(report, "completion"), mcq_score_distribution(report, "next_token")]
    if report.permutation is not None:
        figures.append(rank_histogram(report))
    k = report.original.n_options
    rows = []
    for kind in ("completion", "next_token"):
        drop, (lo, hi) = score_drop(report, kind)
        rows.append(
            (
                (
                    PROBE_TITLES[kind],
                    f"{report.original.summary(kind).mean:.2f} of {k}",
                    f"{report.shuffled.summary(kind).mean:.2f} of {k}",
                    f"{drop:+.2f}",
                    f"{lo:+.2f} to {hi:+.2f}",
                ),
                "",
            )
        )
    return ReportSection(
        heading=f"Multiple-choice memorisation · {benchmark} · {model}",
        finding=mcq_finding(report),
        figures=tuple(figures),
        meta=f"Multiple-choice test · {len(report.original.results)} questions · {k} options each",
        details=_table(("probe", "published order", "shuffled", "drop", "drop 95% CI"), rows),
    )


# ------------------------------------------------------------------------------------------ benchmark order

ORDER_TITLE = "LeakLens benchmark-order report"
ORDER_INTRO = (
    "The benchmark's examples are split into shards of consecutive examples; in each shard the log-likelihood of "
    "the published order is compared with that of shuffled orders. A model that never read the file has no reason "
    "to prefer its order, so the published order then sits among its shuffles; one that trained on the file in "
    "its order finds it likelier, shard after shard (one-sided t-test over shards)."
)


def order_shard_rows(test: OrderTest) -> list[dict[str, Any]]:
    """One row per shard: its examples, the published order's log-likelihood and its shuffles', the advantage and
    the shard's own permutation p-value (the CSV export and the report's table)."""
    return [shard.to_dict() for shard in test.result.shards]


def order_csv(test: OrderTest, finding: Finding, data: str) -> CsvFile:
    """Each shard's published order against its shuffles."""
    return CsvFile(
        "Published order vs shuffles per shard (CSV)",
        "leaklens_benchmark_order.csv",
        result_csv(order_shard_rows(test), finding=finding, model=test.model, data=data),
    )


def _order_table(test: OrderTest) -> str:
    rows = [
        (
            (
                str(row["shard"] + 1),
                f"{row['first_example']}–{row['last_example']}",
                f"{row['canonical_logprob']:.2f}",
                f"{row['shuffled_mean_logprob']:.2f}",
                f"{row['difference']:+.3f}",
                f"{row['n_shuffled']}{' (all)' if row['exhaustive'] else ''}",
                f"{row['p_value']:.2g}",
            ),
            "",
        )
        for row in order_shard_rows(test)
    ]
    return _table(
        (
            "shard",
            "examples",
            "published order (log-likelihood, nats)",
            "average shuffle",
            "advantage (nats)",
            "shuffles scored",
            "shard p-value",
        ),
        rows,
    )


def order_section(test: OrderTest) -> ReportSection:
    """The published order against its shuffles per shard (the evidence), then a table of every shard."""
    result = test.result
    details = ['<p class="label">Every shard</p>', _order_table(test)]
    if test.run_id:
        details.append(f'<p class="meta">Stored as run {escape(test.run_id)}.</p>')
    return ReportSection(
        heading=f"Benchmark order · {dataset_label(test.benchmark)} · {test.model}",
        finding=test.finding,
        figures=(order_chart(test),),
        meta=(
            f"Benchmark-order test · {result.n_examples} examples in {len(result.shards)} shards · up to "
            f"{result.permutations} shuffles per shard (seed {result.seed}) · p = {result.p_value:.2g} · text "
            f"template: {test.template}"
        ),
        details="".join(details),
    )


def order_report(test: OrderTest, *, title: str = ORDER_TITLE) -> str:
    """The self-contained report of one benchmark-order run."""
    return render_report([order_section(test)], title=title, intro=ORDER_INTRO)


# ---------------------------------------------------------------------------------------------- render


def render_report(
    sections: Sequence[ReportSection], *, title: str, intro: str = "", overview: go.Figure | None = None
) -> str:
    """The whole document: every verdict first, then an optional overview chart, then one section per run."""
    if not sections:
        raise LeakLensError("There are no finished runs to report; run a test first.")
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    anchors = [f"run-{i + 1}" for i in range(len(sections))]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title><style>{_STYLE}</style>",
        f'<script type="text/javascript">{get_plotlyjs()}</script>',
        "</head><body>",
        f"<h1>{escape(title)}</h1>",
        '<div class="findings">',
        *(banner_html(s.finding, subject=s.heading, link=a) for s, a in zip(sections, anchors)),
        "</div>",
        f'<p class="meta">Generated {generated} by LeakLens · {len(sections)} run(s). {intro}</p>',
    ]
    if overview is not None:
        parts += ["<h2>Compare methods</h2>", _figure_html(overview)]
    for section, anchor in zip(sections, anchors):
        parts.append(f'<section id="{anchor}"><h2>{escape(section.heading)}</h2>')
        if section.meta:
            parts.append(f'<p class="meta">{escape(section.meta)}</p>')
        evidence, *more = section.figures or (None,)
        if evidence is not None:
            parts.append(_figure_html(evidence))
        parts += [section.lead, finding_details_html(section.finding)]
        parts += [_figure_html(figure) for figure in more]
        parts += [section.details, "</section>"]
    parts.append("</body></html>")
    return "\n".join(parts)


MEMBERSHIP_INTRO = (
    "AUROC: probability that a random member text outscores a random non-member (0.5 = chance), with a 95% "
    "bootstrap interval. The blind baseline is a bag-of-words classifier that never sees the model."
)


def build_html_report(
    results: Sequence[BenchmarkResult], *, title: str = DEFAULT_TITLE, sections: Sequence[ReportSection] = ()
) -> str:
    """The report of membership runs (an AUROC heatmap across them first) and any other runs' ``sections``."""
    if not results and not sections:
        raise LeakLensError("There are no finished benchmark runs to report; run a membership benchmark first.")
    return render_report(
        [*membership_sections(results), *sections],
        title=title,
        intro=MEMBERSHIP_INTRO if results else "",
        overview=auroc_heatmap(results) if len(results) > 1 else None,
    )
