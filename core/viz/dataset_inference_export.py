"""The Dataset inference page's CSV downloads: the test result, each detector alone and the per-text scores,
each row led by the verdict, the model and the two sets compared (``core.viz.csv_export.result_csv``)."""

from __future__ import annotations

from core.dataset_inference.labels import data_label
from core.dataset_inference.rows import detector_rows, summary_rows, text_rows
from core.dataset_inference.run import DatasetInference
from core.viz.csv_export import result_csv


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
