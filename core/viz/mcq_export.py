"""The MCQ memorisation page's downloads: the per-question scores (CSV) and the one-run HTML report."""

from __future__ import annotations

from core.mcq.completion import ProbeKind
from core.mcq.finding import score_drop
from core.mcq.study import MCQReport
from core.stats.finding import Finding
from core.viz.csv_export import result_csv
from core.viz.report import mcq_section, render_report

VERDICT_PROBE: ProbeKind = "completion"
"""The probe the verdict rests on (options finished word for word): its chart is the one under the verdict."""
REPORT_TITLE = "LeakLens multiple-choice memorisation report"
REPORT_INTRO = (
    "Each option is cut in half and the model continues it; a model that memorised the benchmark "
    "finishes more options word for word in the published order than once the options are shuffled."
)


def questions_csv(report: MCQReport, finding: Finding, *, model: str, benchmark: str) -> str:
    """Per-question scores, each row led by the verdict and the interval of the drop it rests on."""
    drop, (low, high) = score_drop(report, VERDICT_PROBE)
    interval = {"completion_drop": drop, "completion_drop_ci_low": low, "completion_drop_ci_high": high}
    return result_csv(
        [{**interval, **row} for row in report.question_rows()], finding=finding, model=model, data=benchmark
    )


def mcq_report_html(report: MCQReport, *, model: str, benchmark: str) -> str:
    """The self-contained HTML report of one run: the verdict, the charts and the numbers."""
    return render_report(
        [mcq_section(report, model=model, benchmark=benchmark)], title=REPORT_TITLE, intro=REPORT_INTRO
    )
