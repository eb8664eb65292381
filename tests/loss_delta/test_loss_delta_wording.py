"""The Loss delta page's words and downloads, from a small hand-built report: the names of its data and models,
its rules as sentences built from the constants, and the two CSV files row by row."""

from __future__ import annotations

import csv
import io

import pytest

import core.loss_delta.describe as describe
from core.loss_delta.delta import DeltaStats, LeakageReport, ModelDelta
from core.loss_delta.describe import (
    below_threshold,
    below_threshold_note,
    data_label,
    delta2_rule,
    models_tested,
    reference_check_rule,
)
from core.loss_delta.losses import ModelLosses, ProblemLoss
from core.stats.finding import Finding
from core.viz.reports.loss_delta import problems_csv, summary_csv

FINDING = Finding("weak", "The benchmark is a little easier than the reference.")


def _stats(l_test: float, l_ref: float, ci: tuple[float, float], p: float) -> DeltaStats:
    return DeltaStats(
        l_test=l_test,
        l_ref=l_ref,
        delta=l_test - l_ref,
        ci=ci,
        p_value=p,
        test="wilcoxon signed-rank",
        n_test=2,
        n_ref=2,
    )


def _losses(model: str, test: tuple[float, float], ref: tuple[float, float]) -> ModelLosses:
    return ModelLosses(
        model,
        tuple(ProblemLoss(f"t/{i}", loss, 4) for i, loss in enumerate(test)),
        tuple(ProblemLoss(f"t/{i}", loss, 4) for i, loss in enumerate(ref)),
    )


@pytest.fixture()
def report() -> LeakageReport:
    """sft (Δ = 1.5 − 2.0 = −0.5) fine-tuned from base (Δ = 1.75 − 2.0 = −0.25): Δ² = −0.25; plain (no base)."""
    sft = ModelDelta(
        "sft", "base", _stats(1.5, 2.0, (-0.75, -0.25), 0.125), _stats(1.75, 2.0, (-0.5, 0.0), 0.5), (-0.5, 0.0)
    )
    plain = ModelDelta("plain", None, _stats(2.0, 2.0, (-0.25, 0.25), 1.0))
    losses = (
        _losses("sft", (1.0, 2.0), (2.5, 1.5)),
        _losses("base", (1.5, 2.0), (2.5, 1.5)),
        _losses("plain", (2.0, 2.0), (2.0, 2.0)),
    )
    return LeakageReport("demo:famous-vs-fresh", "ref.jsonl", True, (sft, plain), losses, ())


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_the_report_names_its_data_by_title_and_its_tested_models(report):
    assert data_label(report) == "Famous vs fresh passages (demo) vs ref.jsonl"
    assert models_tested(report) == "sft, plain"  # the base model is what sft is compared with, not tested


def test_the_rules_are_sentences_built_from_the_constants(monkeypatch):
    assert delta2_rule() == (
        "the original study proposes Δ² > -0.02 as a necessary condition for a clean "
        "fine-tune; the threshold depends on the base"
    )
    assert reference_check_rule() == (
        "solution length more than 30% off its paired test problem, or per-problem Δ < −0.2 for more than 80% of models"
    )
    monkeypatch.setattr(describe, "DELTA2_THRESHOLD", -0.05)
    monkeypatch.setattr(describe, "LENGTH_TOLERANCE", 0.25)
    monkeypatch.setattr(describe, "SUSPICIOUS_DELTA", -0.5)
    monkeypatch.setattr(describe, "SUSPICIOUS_SHARE", 0.9)
    assert "Δ² > -0.05 as" in delta2_rule()
    assert reference_check_rule() == (
        "solution length more than 25% off its paired test problem, or per-problem Δ < −0.5 for more than 90% of models"
    )


def test_the_models_below_the_threshold_and_their_sentence(report):
    assert below_threshold(report) == ["sft"]  # Δ² −0.25 < −0.02; plain has no Δ²
    assert below_threshold(report, -0.5) == []
    assert below_threshold_note(["sft"], -0.02) == (
        "Δ² below the study's threshold -0.020 for: sft. The study reads this as fine-tuning having made the "
        "benchmark markedly easier than the reference; the verdict above weighs it with its interval."
    )


def test_the_summary_csv_has_one_row_per_tested_model_led_by_the_verdict(report):
    rows = _rows(summary_csv(report, FINDING))
    assert list(rows[0])[:4] == ["verdict", "verdict_headline", "model", "data"]
    assert [(r["verdict"], r["model"], r["data"]) for r in rows] == [
        ("weak", "sft, plain", "Famous vs fresh passages (demo) vs ref.jsonl")
    ] * 2
    sft, plain = rows
    assert {
        k: sft[k]
        for k in (
            "delta",
            "delta_ci_low",
            "delta_ci_high",
            "p_value",
            "loss_test",
            "loss_reference",
            "n_test",
            "n_reference",
            "base_model",
            "delta_base",
            "delta2",
            "delta2_ci_low",
            "delta2_ci_high",
            "significance_test",
        )
    } == {
        "delta": "-0.5",
        "delta_ci_low": "-0.75",
        "delta_ci_high": "-0.25",
        "p_value": "0.125",
        "loss_test": "1.5",
        "loss_reference": "2.0",
        "n_test": "2",
        "n_reference": "2",
        "base_model": "base",
        "delta_base": "-0.25",
        "delta2": "-0.25",
        "delta2_ci_low": "-0.5",
        "delta2_ci_high": "0.0",
        "significance_test": "wilcoxon signed-rank",
    }
    assert (plain["delta"], plain["base_model"], plain["delta_base"], plain["delta2"]) == ("0.0", "", "", "")


def test_the_problems_csv_has_a_row_per_problem_and_scoring_model_base_included(report):
    rows = _rows(problems_csv(report, FINDING))
    assert list(rows[0]) == [
        "verdict",
        "verdict_headline",
        "model",
        "data",
        "delta",
        "delta_ci_low",
        "delta_ci_high",
        "p_value",
        "scored_by",
        "task_id",
        "loss_test",
        "loss_reference",
    ]
    assert [(r["scored_by"], r["task_id"], r["loss_test"], r["loss_reference"], r["delta"]) for r in rows] == [
        ("sft", "t/0", "1.0", "2.5", "-0.5"),
        ("sft", "t/1", "2.0", "1.5", "-0.5"),
        ("base", "t/0", "1.5", "2.5", "-0.25"),
        ("base", "t/1", "2.0", "1.5", "-0.25"),
        ("plain", "t/0", "2.0", "2.0", "0.0"),
        ("plain", "t/1", "2.0", "2.0", "0.0"),
    ]
