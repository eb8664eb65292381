"""Dataset inference's report and CSVs: its section (held-out score distributions, split p-values, detector
weights, each detector alone), the report's title and intro, the stored run's download (each detector's AUROC and
weight) and the page's three downloads (the test result, each detector alone, the per-text scores), each row led
by the verdict, the model and the two sets compared (``core.viz.csv_export.result_csv``)."""

from __future__ import annotations

from core.data.demo import pair_label
from core.dataset_inference.labels import data_label
from core.dataset_inference.rows import detector_rows, summary_rows, text_rows
from core.dataset_inference.run import DatasetInference
from core.stats.finding import Finding
from core.viz.csv_export import result_csv
from core.viz.dataset_inference_plots import detector_weights, held_out_scores, split_p_values
from core.viz.reports.shell import CsvFile, ReportSection, fmt, render_report, table

TITLE = "LeakLens dataset inference report"
INTRO = (
    "Dataset inference tests a set, not a text: a combination of every detector's score, learnt on half of each "
    "set and tested on the other half over several random splits, gives one p-value (twice the median split "
    "p-value). It holds only if the validation texts come from the same distribution as the suspect texts."
)


def inference_section(inference: DatasetInference) -> ReportSection:
    """Held-out score distributions (the evidence), split p-values, detector weights, then each detector alone."""
    result = inference.result
    rows = [
        ((row["label"], fmt(row["auroc"]), f"{fmt(row['ci_low'])}–{fmt(row['ci_high'])}"), "")
        for row in inference.scores.table_rows()
        if row["auroc"] is not None
    ]
    details = '<p class="label">Each detector alone: AUROC, suspect vs validation</p>' + table(
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


def inference_report(inference: DatasetInference, *, title: str = TITLE) -> str:
    """The self-contained report of one dataset-inference run."""
    return render_report([inference_section(inference)], title=title, intro=INTRO)


def inference_csv(inference: DatasetInference, finding: Finding, data: str) -> CsvFile:
    """Each detector's AUROC between the two sets and its weight in the combined score (a stored run's download)."""
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


def _csv(inference: DatasetInference, rows: list[dict]) -> str:
    return result_csv(rows, finding=inference.finding, model=inference.model, data=data_label(inference))


def result_table_csv(inference: DatasetInference) -> str:
    """The test result: effect with its interval, p-value, blind baseline, sizes, splits and seed."""
    return _csv(inference, summary_rows(inference))


def detectors_csv(inference: DatasetInference) -> str:
    """Each detector's AUROC alone (suspect vs validation) and its weight in the combined score."""
    return _csv(inference, detector_rows(inference))


def texts_csv(inference: DatasetInference) -> str:
    """Every text's detector scores, with the set it belongs to."""
    return _csv(inference, text_rows(inference))
