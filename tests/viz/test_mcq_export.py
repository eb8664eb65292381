"""The MCQ memorisation page's per-question CSV, from a small hand-built run: each row led by the verdict, the
model, the benchmark and the completion drop the verdict rests on, then the question's own scores."""

from __future__ import annotations

import csv
import io
from types import SimpleNamespace

from core.stats.finding import Finding
from core.viz.reports.mcq import VERDICT_PROBE, questions_csv

FINDING = Finding("strong", "The model finishes the published options far more often than shuffled ones.")


class _Result:
    """One question's probe outcome: ``score(kind)`` options reproduced, whatever the probe."""

    def __init__(self, score: int) -> None:
        self._score = score

    def score(self, kind: str) -> int:
        return self._score


def _report() -> SimpleNamespace:
    """Two questions, 3 options finished each in the published order and 1 once shuffled: a drop of exactly 2."""
    rows = [
        {"index": 0, "completion": 3, "completion_shuffled": 1},
        {"index": 1, "completion": 3, "completion_shuffled": 1},
    ]
    return SimpleNamespace(
        original=SimpleNamespace(results=[_Result(3), _Result(3)]),
        shuffled=SimpleNamespace(results=[_Result(1), _Result(1)]),
        question_rows=lambda: rows,
    )


def test_the_verdict_rests_on_the_completion_probe():
    assert VERDICT_PROBE == "completion"


def test_each_question_row_starts_with_the_verdict_and_the_completion_drop():
    rows = list(csv.DictReader(io.StringIO(questions_csv(_report(), FINDING, model="tiny", benchmark="MMLU"))))
    assert list(rows[0]) == [
        "verdict",
        "verdict_headline",
        "model",
        "data",
        "completion_drop",
        "completion_drop_ci_low",
        "completion_drop_ci_high",
        "index",
        "completion",
        "completion_shuffled",
    ]
    assert rows == [
        {
            "verdict": "strong",
            "verdict_headline": FINDING.headline,
            "model": "tiny",
            "data": "MMLU",
            "completion_drop": "2.0",
            "completion_drop_ci_low": "2.0",
            "completion_drop_ci_high": "2.0",
            "index": str(i),
            "completion": "3",
            "completion_shuffled": "1",
        }
        for i in (0, 1)
    ]
