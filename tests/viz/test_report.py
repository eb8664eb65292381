"""Result figures (traces and values) and the self-contained HTML report / CSV export."""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import replace
from html import escape

import pytest
from plotly.offline import get_plotlyjs

from core.config import SHARED_DATA_DIR
from core.data.problems import CodeProblem, ProblemSet
from core.data.questions import load_mcq
from core.errors import LeakLensError
from core.loss_delta.delta import LeakageReport, ModelRequest, build_leakage_report, pair_sets
from core.loss_delta.finding import leakage_finding
from core.loss_delta.losses import ModelLosses, ProblemLoss
from core.mcq.finding import mcq_finding
from core.mcq.study import MCQReport
from core.membership.benchmark import BenchmarkResult
from core.membership.finding import membership_finding
from core.stats.finding import Finding
from core.stats.metrics import evaluate, roc_points
from core.store.results import SampleRow
from core.viz.banner import banner_html
from core.viz.membership_plots import (
    BASELINE_LABEL,
    ENSEMBLE_LABEL,
    auroc_bars,
    auroc_heatmap,
    column_labels,
    member_score_histogram,
    roc_overlay,
    top_methods,
)
from core.viz.reports.loss_delta import leakage_section
from core.viz.reports.mcq import mcq_section
from core.viz.reports.membership import build_html_report, results_csv
from core.viz.reports.shell import render_report
from tests.helpers.mcq import run_benchmark

DATA = SHARED_DATA_DIR
LABELS = [1, 1, 1, 1, 0, 0, 0, 0]
SCORES = {
    "loss": [0.9, 0.8, 0.3, 0.7, 0.2, 0.4, 0.1, 0.35],  # hand count: 14 of 16 member/non-member pairs won
    "zlib": [0.1, 0.5, 0.2, 0.6, 0.3, 0.4, 0.9, 0.0],
}


def _result(dataset="wiki <b>.csv", model="tiny-random", keys=("loss", "zlib"), baseline_scores=None):
    samples = [SampleRow(str(i), y, {k: SCORES[k][i] for k in keys}) for i, y in enumerate(LABELS)]
    metrics = {k: evaluate(LABELS, SCORES[k]) for k in keys}
    baseline = evaluate(LABELS, baseline_scores or [0.6, 0.6, 0.6, 0.4, 0.4, 0.4, 0.4, 0.6])
    return BenchmarkResult(
        run_id="r" + dataset[:3],
        dataset=dataset,
        fingerprint="f",
        model=model,
        method_keys=list(keys),
        method_labels={"loss": "Loss", "zlib": "zlib <ratio>"},
        samples=samples,
        metrics=metrics,
        blind_baseline=baseline,
        ensemble=evaluate(LABELS, [a + b for a, b in zip(SCORES["loss"], SCORES["zlib"])]),
        notes=["a note with <script>alert(1)</script>"],
    )


def test_hand_counted_auroc():
    assert evaluate(LABELS, SCORES["loss"]).auroc == pytest.approx(14 / 16)


def test_heatmap_values_and_hover():
    a, b = _result(), _result(dataset="books.csv", keys=("loss",))
    figure = auroc_heatmap([a, b])
    (trace,) = figure.data
    assert list(trace.x) == ["wiki <b>.csv", "books.csv"]
    assert list(trace.y) == ["Loss", "zlib <ratio>", ENSEMBLE_LABEL, BASELINE_LABEL]
    z = [list(row) for row in trace.z]
    assert z[0] == [pytest.approx(14 / 16), pytest.approx(14 / 16)]
    assert z[1][0] == pytest.approx(a.metrics["zlib"].auroc)
    assert z[1][1] is None  # books has no zlib run
    assert z[3][0] == pytest.approx(a.blind_baseline.auroc)
    ci = a.metrics["loss"].ci
    assert list(trace.customdata[0][0][:2]) == [ci[0], ci[1]]
    assert "95% CI" in trace.hovertemplate
    assert "customdata[0]" in trace.hovertemplate
    with_models = auroc_heatmap([a, _result(model="smollm2-135m")])
    assert list(with_models.data[0].x) == ["wiki <b>.csv · tiny-random", "wiki <b>.csv · smollm2-135m"]


def test_runs_on_the_same_dataset_get_distinct_columns():
    full = _result(dataset="books.csv")
    sample = replace(full, run_id="sample-run", samples=full.samples[:6])
    rerun = replace(full, run_id="another-run")
    assert column_labels([full, sample]) == ["books.csv · n=8", "books.csv · n=6"]
    assert column_labels([full, sample, rerun]) == [
        "books.csv · n=8 · run rboo",
        "books.csv · n=6",
        "books.csv · n=8 · run another-",
    ]
    assert column_labels([full, sample], with_model=True) == [
        "books.csv · tiny-random · n=8",
        "books.csv · tiny-random · n=6",
    ]
    figure = auroc_heatmap([full, sample])
    assert len(set(figure.data[0].x)) == 2  # equal names would merge into one column
    html = build_html_report([full, sample])
    assert "<h2>books.csv · tiny-random · n=8</h2>" in html
    assert "<h2>books.csv · tiny-random · n=6</h2>" in html


def test_bars_have_ci_error_bars_and_baseline_line():
    result = _result()
    figure = auroc_bars(result)
    (bar,) = figure.data
    assert list(bar.x) == ["Loss", "zlib <ratio>", ENSEMBLE_LABEL, BASELINE_LABEL]
    loss = result.metrics["loss"]
    assert bar.y[0] == pytest.approx(loss.auroc)
    assert bar.error_y.array[0] == pytest.approx(loss.ci[1] - loss.auroc)
    assert bar.error_y.arrayminus[0] == pytest.approx(loss.auroc - loss.ci[0])
    lines = [s for s in figure.layout.shapes if s.type == "line"]
    assert sorted(round(s.y0, 6) for s in lines) == sorted([0.5, round(result.blind_baseline.auroc, 6)])
    assert any("blind baseline" in a.text for a in figure.layout.annotations)


def test_roc_overlay_points_and_baseline_entry():
    result = _result()
    figure = roc_overlay(result)
    names = [t.name for t in figure.data]
    assert names[0] == "Loss (0.875)"
    assert names[2] == "chance (0.500)"
    assert names[3].startswith(BASELINE_LABEL)
    fpr, tpr = roc_points(LABELS, SCORES["loss"])
    assert list(figure.data[0].x) == fpr.tolist()
    assert list(figure.data[0].y) == tpr.tolist()
    only = roc_overlay(result, ["zlib"])
    assert [t.name for t in only.data][0].startswith("zlib <ratio>")
    assert top_methods(result, 1) == ["loss"]


def test_score_distribution_splits_by_label():
    figure = member_score_histogram(_result(), "loss")
    members, nonmembers = figure.data
    assert list(members.x) == SCORES["loss"][:4]
    assert list(nonmembers.x) == SCORES["loss"][4:]
    assert members.name == "members (n=4)"
    assert "AUROC 0.875" in figure.layout.title.text


def test_csv_export_rows():
    text = results_csv([_result(), _result(dataset="books.csv", keys=("loss",))])
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 4 + 3
    assert {r["run_id"] for r in rows} == {"rwik", "rboo"}
    first = rows[0]
    assert first["dataset"] == "wiki <b>.csv"
    assert first["method"] == "loss"
    assert float(first["auroc"]) == pytest.approx(0.875)
    assert [r["method"] for r in rows[:4]] == ["loss", "zlib", "blind_baseline", "ensemble"]


def test_report_is_self_contained_and_escaped(tmp_path):
    html = build_html_report([_result(), _result(dataset="books.csv", keys=("loss",))], title="Q3 <audit>")
    path = tmp_path / "report.html"
    path.write_text(html, encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    assert not re.search(r"<script[^>]+src=", html), "every script must be inline"
    assert not re.search(r"<link[^>]+href=[\"']https?:", html)
    assert html.count("plotly.js v") >= 1
    assert len(html) > 3_000_000  # the library itself is inline
    assert html.count('class="plotly-graph-div"') == 1 + 2 * 2  # heatmap + bars and ROC per run
    assert "<title>Q3 &lt;audit&gt;</title>" in html
    assert "wiki &lt;b&gt;.csv" in html
    assert "wiki <b>.csv ·" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<script>alert(1)" not in html
    assert "0.875" in html


def test_report_warns_when_baseline_wins():
    easy = _result(baseline_scores=[0.9, 0.9, 0.9, 0.9, 0.1, 0.1, 0.1, 0.1])
    assert math.isclose(easy.blind_baseline.auroc, 1.0)
    assert "labels are predictable from the wording alone" in build_html_report([easy])
    assert "labels are predictable from the wording alone" not in build_html_report([_result()])


def test_empty_report_is_an_error():
    with pytest.raises(LeakLensError, match="no finished"):
        build_html_report([])


def _leakage() -> LeakageReport:
    """A fine-tuned model whose benchmark losses fall below the reference's, and its base model."""

    def problems(name: str, n: int) -> ProblemSet:
        return ProblemSet(name, tuple(CodeProblem(f"t{i}", "def f():", "    return 1") for i in range(n)), True)

    sets = pair_sets(problems("HumanEval", 6), problems("reference <set>", 6))
    losses = {
        model: ModelLosses(
            model,
            tuple(ProblemLoss(f"t{i}", 1.0 + shift * i / 6, 5) for i in range(6)),
            tuple(ProblemLoss(f"t{i}", 1.2 + 0.05 * i, 5) for i in range(6)),
        )
        for model, shift in (("fine-tuned", -0.6), ("base", 0.2))
    }
    return build_leakage_report(sets, [ModelRequest("fine-tuned", "base")], losses, n_resamples=200)


def _mcq_report(lm) -> MCQReport:
    """Three MMLU questions through the whole study (probes, shuffled probes, option-order test)."""
    questions = load_mcq(str(DATA / "mmlu_sample.jsonl"), limit=3).questions
    return run_benchmark(lm, questions, shuffle_seed=1, permutation=True)


def _body(html: str) -> str:
    return html[html.index("<body>") :]


def test_report_starts_with_the_finding_then_the_evidence_chart():
    result = _result()
    html = build_html_report([result])
    body = _body(html)
    finding = membership_finding(result)
    # The title, then straight away the verdict banner with its own colours and the headline.
    first = re.sub(r"^<body>\s*<h1>[^<]*</h1>\s*", "", body)
    assert first.startswith('<div class="findings">\n<div class="leaklens-finding"'), first[:200]
    assert escape(finding.headline) in first[:2000]
    assert "background: #" in first[:600]
    headline_at = body.index(escape(finding.headline))
    bars_at = body.index("AUROC with 95% CI")
    evidence_at = body.index(escape(finding.evidence[0]))
    table_at = body.index("<table>")
    roc_at = body.index("ROC curves")
    assert headline_at < bars_at < evidence_at < roc_at < table_at  # finding, evidence chart, details
    assert body.count('class="plotly-graph-div"') == 2  # one run: bars and ROC, no one-column heatmap


def test_report_embeds_plotly_once_and_loads_nothing_from_the_network():
    html = build_html_report([_result(), _result(dataset="books.csv", keys=("loss",))])
    library = get_plotlyjs()
    assert html.count(library[:400]) == 1
    assert html.count(library[-400:]) == 1
    assert len(html) < len(library) + 400_000
    outside = html.replace(library, "")  # the library's own code mentions URLs it never loads here
    assert not re.search(r"<script[^>]+src=", outside)
    assert not re.search(r"(href|src)=[\"']?https?:", outside)
    assert html.index(library[:400]) < html.index('class="plotly-graph-div"')  # loaded before any chart
    charts = re.findall(r'"title":\{[^{}]*"text":"([^"]+)"', outside)
    # data in chart titles is escaped too: Plotly would draw "<b>" in a dataset's name as bold markup
    for title in (
        "AUROC by method and dataset",
        "wiki &lt;b&gt;.csv \\u00b7 tiny-random: AUROC with 95% CI",
        "books.csv \\u00b7 tiny-random: AUROC with 95% CI",
        "ROC curves \\u00b7 books.csv",
    ):
        assert any(t.startswith(title) for t in charts), (title, charts)
    # Every run's verdict is at the top, each linking to its section.
    assert html.count('class="leaklens-finding"') == 2
    assert '<a href="#run-1"' in html
    assert '<section id="run-2">' in html


def test_report_covers_loss_delta_and_mcq_runs(tiny_lm):
    leakage, mcq = _leakage(), _mcq_report(tiny_lm)
    sections = [leakage_section(leakage), mcq_section(mcq, model="tiny-random", benchmark="mmlu <sample>")]
    html = build_html_report([_result()], title="All tests", sections=sections)
    body = _body(html)
    headlines = [
        escape(f.headline) for f in (membership_finding(_result()), leakage_finding(leakage), mcq_finding(mcq))
    ]
    positions = [body.index(h) for h in headlines]
    assert positions == sorted(positions)
    assert positions[-1] < body.index('class="plotly-graph-div"')
    assert "Loss delta · HumanEval vs reference &lt;set&gt;" in body
    assert "Multiple-choice memorisation · mmlu &lt;sample&gt; · tiny-random" in body
    # membership: bars + ROC; loss delta: loss bars, Δ² bars, per-problem losses; MCQ: two probes + order ranks
    assert body.count('class="plotly-graph-div"') == 2 + 3 + 3
    assert html.count(get_plotlyjs()[:400]) == 1
    only = render_report([leakage_section(leakage)], title="Δ")
    assert escape(leakage_finding(leakage).headline) in only
    assert "AUROC" not in _body(only)
    with pytest.raises(LeakLensError, match="no finished"):
        render_report([], title="empty")


def test_banner_names_and_links_its_run_and_escapes_everything():
    finding = Finding("strong", "Model <m> saw it.")
    html = banner_html(finding, subject="wiki <b>.csv", link="run-1")
    assert 'href="#run-1"' in html
    assert "wiki &lt;b&gt;.csv" in html
    assert "Model &lt;m&gt; saw it." in html
    assert "<b>" not in html
    assert "<m>" not in html

    from ui.finding import banner_html as page_banner

    assert page_banner is banner_html  # one renderer for the pages and the report
