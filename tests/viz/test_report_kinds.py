"""One self-contained report for every kind of run: passage inspection, loss delta and overlap search.

Each report is built from a real run (the tiny random model, the shipped demo data, an embedded overlap
index) and must open with the run's verdict, show its evidence chart, embed Plotly once, load nothing from
the network and escape text taken from the data. The builders are shared with the browser test, which
opens the files in Chromium.
"""

from __future__ import annotations

import dataclasses
import re
from html import escape
from pathlib import Path

import pytest
from plotly.offline import get_plotlyjs

from core.data.labelled import load_labelled_dataset
from core.data.problems import CodeProblem, ProblemSet, builtin_problems
from core.engine.handle import resolve_model
from core.engine.models import LoadedModel
from core.engine.setup import ScoringSetup
from core.errors import LeakLensError
from core.loss_delta.delta import LeakageReport, ModelRequest
from core.loss_delta.finding import leakage_finding
from core.loss_delta.run import run_leakage_test
from core.overlap.backends import get_backend
from core.overlap.finding import overlap_finding
from core.overlap.indexing import build_index
from core.overlap.matching import SearchSettings
from core.overlap.run import SearchOutcome, run_search
from core.overlap.sources import EvalInstance, load_eval_set, training_sources
from core.passage.calibration import load_fresh_passages, stored_fresh_calibration
from core.passage.inspection import inspect_passages
from core.passage.verdict import judge_passages
from core.stats.finding import Finding
from core.store.results import ResultStore
from core.viz.reports.loss_delta import leakage_report
from core.viz.reports.overlap import overlap_report
from core.viz.reports.passage import passage_report, passage_sections

PLANTED = '<script>alert("leaklens")</script>'
CPU = ScoringSetup("cpu", "float32")


# ------------------------------------------------------------------------------------------ builders


def build_passage_report(lm: LoadedModel, root: Path) -> tuple[str, list[Finding]]:
    """Two inspected passages (a famous one with a planted script tag, a fresh one), placed among fresh text
    and continued from their first halves."""
    demo = load_labelled_dataset("demo:famous-vs-fresh", limit=12)
    famous = next(t for t, y in zip(demo.texts, demo.labels) if y == 1)
    fresh = next(t for t, y in zip(demo.texts, demo.labels) if y == 0)
    found = inspect_passages(lm, [(f"Famous {PLANTED}", famous + " " + PLANTED), ("Fresh", fresh)], with_kgrams=False)
    calibration = stored_fresh_calibration(
        resolve_model(lm.spec, loader=lambda _: lm, setup=CPU),
        store=ResultStore(root / "fresh.sqlite"),
        passages=load_fresh_passages()[:40],
    )
    verdicts = judge_passages(lm, [(p.analysis.scores, p.analysis.records) for p in found], calibration)
    html = passage_report(found, verdicts, model=lm.spec)
    return html, [v.finding for v in verdicts]


def build_leakage_report(lm: LoadedModel) -> tuple[str, LeakageReport]:
    """A loss-delta run: three built-in problems (one with a planted script tag) against three others."""
    problems = builtin_problems(limit=6).problems
    planted = CodeProblem(f"Planted/{PLANTED}", problems[0].prompt, problems[0].solution)
    test = ProblemSet(f"bench {PLANTED}", (planted, *problems[1:3]), True)
    ref = ProblemSet("reference", problems[3:6], True)
    report = run_leakage_test(
        test,
        ref,
        [ModelRequest("tiny-a", "tiny-base")],
        model=resolve_model("tiny-a", loader=lambda spec: dataclasses.replace(lm, spec=spec)),
    )
    return leakage_report(report), report


def build_overlap_outcome(root: Path) -> SearchOutcome:
    """The demo test set (plus one planted copy carrying a script tag) searched in the demo training corpus."""
    backend = get_backend("embedded", root=root / "indexes")
    build_index(backend, "demo", training_sources(["demo:overlap-train"]))
    test_set = load_eval_set("demo:overlap-test", None, id_field="id")
    first = run_search(backend, ["demo"], [test_set], SearchSettings(), root / "probe")
    copied = first.best(1)[0].test_text
    planted = EvalInstance(f"planted {PLANTED}", f"{PLANTED} {copied}")
    test_set = dataclasses.replace(test_set, instances=[*test_set.instances, planted])
    return run_search(backend, ["demo"], [test_set], SearchSettings(), root / "out")


# -------------------------------------------------------------------------------------------- checks


def check_self_contained(html: str) -> str:
    """Plotly exactly once (before any chart), nothing loaded from the network; returns the page without it."""
    library = get_plotlyjs()
    assert html.count(library[:400]) == 1
    assert html.count(library[-400:]) == 1
    assert html.index(library[:400]) < html.index('class="plotly-graph-div"')
    outside = html.replace(library, "")
    assert not re.search(r"<script[^>]+src=", outside)
    assert not re.search(r"(href|src)=[\"']?(https?:)?//", outside)
    assert not re.search(r"<link[^>]+href=", outside)
    assert "@import" not in outside
    assert "url(" not in outside
    return outside


def check_starts_with_verdict(body: str, findings: list[Finding]) -> None:
    """Below the title, the page opens with every finding's banner, before any chart or table."""
    after_title = body.split("</h1>", 1)[1].lstrip()
    assert after_title.startswith('<div class="findings">')
    first_chart = body.index('class="plotly-graph-div"')
    headlines = re.findall(r'class="leaklens-headline"[^>]*>([^<]*)</div>', body)
    assert headlines[: len(findings)] == [escape(f.headline) for f in findings]
    for finding in findings:
        assert body.index(escape(finding.headline)) < first_chart
        assert f'data-level="{finding.level}"' in body


def check_escaped(body: str) -> None:
    assert PLANTED not in body
    assert 'alert("leaklens")</script>' not in body
    assert escape(PLANTED) in body or escape(PLANTED, quote=False) in body


def chart_titles(body: str) -> list[str]:
    return re.findall(r'"title":\{[^{}]*"text":"([^"]+)"', body)


# --------------------------------------------------------------------------------------------- tests


@pytest.mark.slow
def test_passage_report_from_a_real_inspection(tiny_lm, tmp_path):
    html, findings = build_passage_report(tiny_lm, tmp_path)
    body = check_self_contained(html)
    check_starts_with_verdict(body, findings)
    check_escaped(body)
    assert body.count('class="plotly-graph-div"') == 2 * 3  # per passage: loss strip, Min-K% strip, token curve
    assert body.count('class="ll-heatmap"') == 2
    assert "Token probability" in body
    assert "freshly written passages" in body
    assert "how surprising the model finds each passage (lower = more predictable)" in body
    assert body.count("Given the first half, what the model wrote") == 2  # the extraction panel, per passage
    assert "The model wrote" in body
    # the evidence (the loss strip) comes right after the section heading, before the details and heatmap
    section = body[body.index('<section id="run-1">') : body.index('<section id="run-2">')]
    assert section.index('class="plotly-graph-div"') < section.index("Evidence") < section.index("ll-heatmap")


def test_passage_sections_need_a_placement_per_passage(tiny_lm):
    found = inspect_passages(tiny_lm, [("A", "One short passage to score.")], with_kgrams=False)
    with pytest.raises(LeakLensError, match="placement"):
        passage_sections(found, [], model="tiny-random")


def test_leakage_report_from_a_real_loss_delta_run(tiny_lm):
    html, report = build_leakage_report(tiny_lm)
    body = check_self_contained(html)
    finding = leakage_finding(report)
    check_starts_with_verdict(body, [finding])
    check_escaped(body)
    titles = chart_titles(body)
    assert body.count('class="plotly-graph-div"') == 3  # Δ bars, Δ² bars, per-problem losses
    assert any("Δ" in t or "\\u0394" in t for t in titles), titles
    assert "L_test" in body
    assert f"significance test: {report.test_used}" in body


def test_overlap_report_from_a_real_search(tmp_path):
    outcome = build_overlap_outcome(tmp_path)
    html = overlap_report(outcome)
    body = check_self_contained(html)
    finding = overlap_finding(outcome.report)
    assert finding.level in {"strong", "moderate", "weak"}  # the demo plants copies
    check_starts_with_verdict(body, [finding])
    check_escaped(body)
    assert body.count('class="plotly-graph-div"') == 1
    assert chart_titles(body)[0] == "How much of each test item was found in the training data"  # as on the page
    assert not any(t.startswith("Contamination") for t in chart_titles(body))  # one pair: no 1 × 1 heatmap
    # the best matches are listed, most overlap first, with the shared text marked
    assert '<mark class="ll-match">' in body
    assert "planted &lt;script&gt;" in body
    values = [float(v) for v in re.findall(r"<td>(\d\.\d\d)</td>", body)]
    assert values
    assert values == sorted(values, reverse=True)
    assert values[0] == 1.0
