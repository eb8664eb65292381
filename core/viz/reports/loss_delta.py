"""The loss-delta test's report and CSVs: its section (loss bars with Δ per model, how fine-tuning moved each
set's loss, Δ² against base models, per-problem losses, the table), the report's title and intro, the stored
comparison's download (Δ per model) and the page's two downloads (one row per tested model; one per problem and
scoring model), each row led by the verdict, the tested models and the data (``core.viz.csv_export``)."""

from __future__ import annotations

from core.data.demo import pair_label
from core.loss_delta.delta import DeltaStats, LeakageReport
from core.loss_delta.describe import data_label, models_tested
from core.loss_delta.finding import leakage_finding
from core.stats.finding import Finding
from core.viz.csv_export import result_csv
from core.viz.loss_delta_plots import delta2_bars, delta_bars, loss_change_html, problem_scatter
from core.viz.reports.shell import CsvFile, ReportSection, fmt, render_report, table

TITLE = "LeakLens loss-delta report"
INTRO = (
    "Δ = L_test − L_ref: mean loss on the benchmark minus mean loss on the reference problems. Below zero, the "
    "model finds the benchmark (or its style) easier than the reference; item-level claims need the membership tests."
)
PROBLEM_COLUMNS = (
    "delta",
    "delta_ci_low",
    "delta_ci_high",
    "p_value",
    "scored_by",
    "task_id",
    "loss_test",
    "loss_reference",
)


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
                fmt(m.stats.l_test),
                fmt(m.stats.l_ref),
                fmt(m.stats.delta, "+.3f"),
                f"{m.stats.ci[0]:+.3f} to {m.stats.ci[1]:+.3f}",
                fmt(m.stats.p_value, ".2g"),
                fmt(m.delta2, "+.3f") if m.delta2 is not None else "–",
            ),
            "",
        )
        for m in report.models
    ]
    details = [table(("model", "base model", "L_test", "L_ref", "Δ", "Δ 95% CI", "p", "Δ²"), rows)]
    if report.flagged:
        details.append('<p class="label">Reference problems that may be unfit as a reference</p>')
        flagged = [((f.task_id, "; ".join(f.reasons)), "") for f in report.flagged]
        details.append(table(("task id", "reasons"), flagged))
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


def leakage_report(report: LeakageReport, *, title: str = TITLE) -> str:
    """The self-contained report of one loss-delta run."""
    return render_report([leakage_section(report)], title=title, intro=INTRO)


def comparison_csv(report: LeakageReport, finding: Finding, data: str, model: str) -> CsvFile:
    """The loss delta of each model of a stored loss-delta comparison."""
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


def _interval(stats: DeltaStats) -> dict[str, object]:
    return {"delta": stats.delta, "delta_ci_low": stats.ci[0], "delta_ci_high": stats.ci[1], "p_value": stats.p_value}


def summary_csv(report: LeakageReport, finding: Finding) -> str:
    """One row per tested model: Δ with its interval and p-value, both losses, and Δ² against the base model."""
    rows = []
    for m in report.models:
        s = m.stats
        rows.append(
            {
                **_interval(s),
                "significance_test": s.test,
                "loss_test": s.l_test,
                "loss_reference": s.l_ref,
                "n_test": s.n_test,
                "n_reference": s.n_ref,
                "base_model": m.base_model,
                "delta_base": m.base_stats.delta if m.base_stats else None,
                "delta2": m.delta2,
                "delta2_ci_low": m.delta2_ci[0] if m.delta2_ci else None,
                "delta2_ci_high": m.delta2_ci[1] if m.delta2_ci else None,
            }
        )
    return result_csv(rows, finding=finding, model=models_tested(report), data=data_label(report))


def problems_csv(report: LeakageReport, finding: Finding) -> str:
    """One row per problem (and scoring model, base models included), with that model's Δ interval first."""
    stats = {m.model: m.stats for m in report.models}
    for m in report.models:
        if m.base_model and m.base_stats and m.base_model not in stats:
            stats[m.base_model] = m.base_stats
    rows = []
    for row in report.problem_rows():
        scored_by = str(row["model"])
        interval = _interval(stats[scored_by]) if scored_by in stats else {}
        rows.append(
            {
                **interval,
                "scored_by": scored_by,
                "task_id": row["task_id"],
                "loss_test": row["loss_test"],
                "loss_reference": row["loss_ref"],
            }
        )
    return result_csv(
        rows, finding=finding, model=models_tested(report), data=data_label(report), columns=PROBLEM_COLUMNS
    )
