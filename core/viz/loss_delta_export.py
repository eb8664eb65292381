"""The Loss delta page's CSV downloads: one row per tested model, and one row per problem and scoring model,
each row led by the verdict, the tested models and the data (``core.viz.csv_export.result_csv``)."""

from __future__ import annotations

from core.loss_delta.delta import DeltaStats, LeakageReport
from core.loss_delta.describe import data_label, models_tested
from core.stats.finding import Finding
from core.viz.csv_export import result_csv

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
