"""The Dataset inference page's names and downloads, from a small hand-built run: what each set is called, the
result's title, and the three CSV files (test result, each detector, each text) row by row."""

from __future__ import annotations

import csv
import io
import math

import pytest

from core.dataset_inference.labels import data_label, heading, set_label
from core.dataset_inference.rows import detector_rows, summary_rows, text_rows
from core.dataset_inference.run import DatasetInference
from core.dataset_inference.statistic import InferenceResult
from core.membership.benchmark import BenchmarkResult
from core.stats.finding import Finding
from core.stats.metrics import MetricResult
from core.store.results import SampleRow
from core.viz.reports.dataset_inference import detectors_csv, result_table_csv, texts_csv

FINDING = Finding("moderate", "The model most likely trained on the suspect texts.")


def _inference(suspect: str = "book.jsonl (label=1)", validation: str = "book.jsonl (label=0)") -> DatasetInference:
    scores = BenchmarkResult(
        run_id="r1",
        dataset="book.jsonl",
        fingerprint="f",
        model="tiny",
        method_keys=["loss", "zlib"],
        method_labels={"loss": "Loss", "zlib": "zlib ratio"},
        samples=[SampleRow("3", 1, {"loss": -1.5, "zlib": 0.5}), SampleRow("7", 0, {"loss": -2.0, "zlib": None})],
        metrics={"loss": MetricResult(0.75, (0.5, 1.0), 0.25, 0.5, 2), "zlib": None},
        blind_baseline=MetricResult(0.5, (0.25, 0.75), 0.0, 0.0, 2),
        ensemble=None,
    )
    result = InferenceResult(
        p_value=0.03125,
        split_p_values=(0.0625, 0.015625),
        effect_size=0.5,
        weights={"loss": 0.75},
        n_suspect=8,
        n_validation=8,
        features=("loss",),
        seed=3,
    )
    return DatasetInference(suspect, validation, scores, result, FINDING)


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_a_set_is_named_by_what_it_is():
    demo = "demo:famous-vs-fresh"
    assert set_label(demo, "label = 1", "famous_vs_fresh.jsonl (label=1)") == "the famous passages (demo)"
    assert set_label(demo, "label=0", "x") == "the freshly written passages (demo)"
    assert set_label(demo, "label=2", "x") == "Famous vs fresh passages (demo) (label=2)"
    assert set_label(demo, "", "x") == "Famous vs fresh passages (demo)"
    assert set_label("/data/book.jsonl", "label=1", "book.jsonl (label=1)") == "book.jsonl (label=1)"
    assert set_label("demo:mcq.csv", "", "demo:mcq.csv", upload=True) == "demo:mcq.csv"  # an upload's own name


def test_the_title_capitalises_a_leading_the_only():
    demo = _inference("the famous passages (demo)", "the freshly written passages (demo)")
    assert data_label(demo) == "the famous passages (demo) vs the freshly written passages (demo)"
    assert heading(demo) == "The famous passages (demo) vs the freshly written passages (demo) · tiny"
    assert heading(_inference()) == "book.jsonl (label=1) vs book.jsonl (label=0) · tiny"


def test_the_summary_row_holds_the_effect_interval_p_value_and_blind_baseline():
    (row,) = summary_rows(_inference())
    half = 1.96 * math.sqrt(2 / 4 + 0.5 * 0.5 / (4 * 4))  # m = 8 // 2 = 4 texts per set-half
    assert row["effect_ci_low"] == pytest.approx(0.5 - half)
    assert row["effect_ci_high"] == pytest.approx(0.5 + half)
    assert {k: v for k, v in row.items() if not k.startswith("effect_ci")} == {
        "effect_size": 0.5,
        "p_value": 0.03125,
        "blind_auroc": 0.5,
        "blind_ci_low": 0.25,
        "blind_ci_high": 0.75,
        "n_suspect": 8,
        "n_validation": 8,
        "splits": 2,
        "seed": 3,
    }


def test_detector_and_text_rows():
    inference = _inference()
    assert detector_rows(inference) == [
        {"detector": "Loss", "auroc": 0.75, "ci_low": 0.5, "ci_high": 1.0, "key": "loss", "weight": 0.75, "n": 2},
        {
            "detector": "zlib ratio",
            "auroc": None,
            "ci_low": None,
            "ci_high": None,
            "key": "zlib",
            "weight": None,
            "n": None,
        },
        {
            "detector": "Blind baseline (bag of words, no model)",
            "auroc": 0.5,
            "ci_low": 0.25,
            "ci_high": 0.75,
            "key": "blind_baseline",
            "weight": None,
            "n": 2,
        },
        {
            "detector": "Ensemble (all methods, cross-validated)",
            "auroc": None,
            "ci_low": None,
            "ci_high": None,
            "key": "ensemble",
            "weight": None,
            "n": None,
        },
    ]
    assert text_rows(inference) == [
        {"text_id": "3", "set": "book.jsonl (label=1)", "loss": -1.5, "zlib": 0.5},
        {"text_id": "7", "set": "book.jsonl (label=0)", "loss": -2.0, "zlib": None},
    ]


def test_every_csv_row_starts_with_the_verdict_model_and_both_sets():
    inference = _inference()
    context = {
        "verdict": "moderate",
        "verdict_headline": FINDING.headline,
        "model": "tiny",
        "data": "book.jsonl (label=1) vs book.jsonl (label=0)",
    }
    (result,) = _rows(result_table_csv(inference))
    assert list(result)[:4] == list(context)
    assert {k: result[k] for k in context} == context
    assert (result["p_value"], result["blind_auroc"], result["splits"], result["seed"]) == ("0.03125", "0.5", "2", "3")
    detectors = _rows(detectors_csv(inference))
    assert [(r["detector"], r["auroc"], r["weight"]) for r in detectors] == [
        ("Loss", "0.75", "0.75"),
        ("zlib ratio", "", ""),
        ("Blind baseline (bag of words, no model)", "0.5", ""),
        ("Ensemble (all methods, cross-validated)", "", ""),
    ]
    texts = _rows(texts_csv(inference))
    assert [{k: r[k] for k in ("model", "text_id", "set", "loss", "zlib")} for r in texts] == [
        {"model": "tiny", "text_id": "3", "set": "book.jsonl (label=1)", "loss": "-1.5", "zlib": "0.5"},
        {"model": "tiny", "text_id": "7", "set": "book.jsonl (label=0)", "loss": "-2.0", "zlib": ""},
    ]
