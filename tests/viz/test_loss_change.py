"""How fine-tuning moved each set's loss, side by side: the HTML table the Loss delta page, the Results page and the
report show whenever a base model is given."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from core.loss_delta.delta import LeakageReport
from core.viz.loss_delta_plots import loss_change_html
from core.viz.reports.loss_delta import leakage_section
from core.viz.reports.shell import render_report
from core.viz.style import TEXT_COLOUR
from tests.viz.test_report import _leakage


def _rows(html: str) -> dict[str, list[str]]:
    """Cell texts per row, by the row's set."""
    rows = re.findall(r'<tr data-set="([^"]+)">(.*?)</tr>', html)
    return {name: re.findall(r"<td style=\"[^\"]*\">(.*?)</td>", cells) for name, cells in rows}


def test_each_set_shows_its_base_and_fine_tuned_loss_and_the_change_with_its_interval():
    report = _leakage()
    (row,) = report.models
    assert row.test_change is not None and row.ref_change is not None
    html = loss_change_html(report)
    assert html.startswith('<div class="leaklens-loss-change"')
    assert "How fine-tuning moved each set&#x27;s loss: fine-tuned against its base model base" in html
    header = re.findall(r"<th style=\"[^\"]*\">(.*?)</th>", html)
    assert header == [
        "Set",
        "Base model&#x27;s loss",
        "Fine-tuned model&#x27;s loss",
        "Change (95% interval)",
        "In words",
    ]
    rows = _rows(html)
    assert list(rows) == ["benchmark", "reference set"]
    lo, hi = row.test_change.ci
    assert rows["benchmark"] == [
        "Benchmark: HumanEval",
        f"{row.test_change.base:.3f}",
        f"{row.test_change.tuned:.3f}",
        f"{row.test_change.change:+.3f} ({lo:+.3f} to {hi:+.3f})",
        "fell",
    ]
    assert rows["benchmark"][1:4] == ["1.083", "0.750", f"-0.333 ({lo:+.3f} to {hi:+.3f})"]  # by hand
    # Both models scored the reference identically: no change, and the name is escaped.
    assert rows["reference set"] == [
        "Reference set: reference &lt;set&gt;",
        "1.325",
        "1.325",
        "+0.000 (+0.000 to +0.000)",
        "no clear change",
    ]
    assert f"Δ² {row.delta2:+.3f} = the benchmark's change minus the reference set's" in html
    # Its own colours, so it reads the same on a page and in a saved report.
    assert f"color:{TEXT_COLOUR}" in html and "background:#ffffff" in html


@pytest.mark.parametrize(("ci", "words"), [((0.01, 0.09), "rose"), ((-0.01, 0.09), "no clear change")])
def test_the_words_follow_the_interval(ci, words):
    report = _leakage()
    (row,) = report.models
    assert row.test_change is not None
    moved = replace(report, models=(replace(row, test_change=replace(row.test_change, ci=ci)),))
    assert _rows(loss_change_html(moved))["benchmark"][-1] == words


def test_no_table_without_a_base_model():
    report = _leakage()
    (row,) = report.models
    plain: LeakageReport = replace(report, models=(replace(row, base_model=None, test_change=None, ref_change=None),))
    assert loss_change_html(plain) == ""


def test_the_report_shows_the_table_under_the_evidence_chart_before_the_details():
    report = _leakage()
    section = leakage_section(report)
    assert section.lead == loss_change_html(report)
    body = render_report([section], title="Δ")
    body = body[body.index("<body>") :]
    chart_at = body.index('class="plotly-graph-div"')
    table_at = body.index('class="leaklens-loss-change"')
    evidence_at = body.index('<p class="label">Evidence</p>')
    assert chart_at < table_at < evidence_at
