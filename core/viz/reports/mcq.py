"""The multiple-choice memorisation test's report and CSVs: its section (options completed per question,
published order vs shuffled, then the order test), the report's title and intro, the stored run's download (the
score drop per probe) and the page's per-question scores, every row led by the verdict (``core.viz.csv_export``).
"""

from __future__ import annotations

from core.mcq.completion import ProbeKind
from core.mcq.finding import mcq_finding, score_drop
from core.mcq.study import MCQReport
from core.stats.finding import Finding
from core.viz.csv_export import result_csv
from core.viz.mcq_plots import PROBE_TITLES, mcq_score_distribution, rank_histogram
from core.viz.reports.shell import CsvFile, ReportSection, render_report, table

TITLE = "LeakLens multiple-choice memorisation report"
INTRO = (
    "Each option is cut in half and the model continues it; a model that memorised the benchmark "
    "finishes more options word for word in the published order than once the options are shuffled."
)
VERDICT_PROBE: ProbeKind = "completion"
"""The probe the verdict rests on (options finished word for word): its chart is the one under the verdict."""


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
        details=table(("probe", "published order", "shuffled", "drop", "drop 95% CI"), rows),
    )


def mcq_report_html(report: MCQReport, *, model: str, benchmark: str) -> str:
    """The self-contained HTML report of one run: the verdict, the charts and the numbers."""
    return render_report([mcq_section(report, model=model, benchmark=benchmark)], title=TITLE, intro=INTRO)


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


def questions_csv(report: MCQReport, finding: Finding, *, model: str, benchmark: str) -> str:
    """Per-question scores, each row led by the verdict and the interval of the drop it rests on."""
    drop, (low, high) = score_drop(report, VERDICT_PROBE)
    interval = {"completion_drop": drop, "completion_drop_ci_low": low, "completion_drop_ci_high": high}
    return result_csv(
        [{**interval, **row} for row in report.question_rows()], finding=finding, model=model, data=benchmark
    )
