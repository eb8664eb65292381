"""The membership verdict's chart in plain words: detector families folded to their best member, best first, the
combined detectors and the wording alone last, and no jargon in what it shows (the hover keeps the numbers)."""

from __future__ import annotations

from dataclasses import replace

from core.membership.finding import membership_finding
from core.stats.metrics import evaluate
from core.store.results import SampleRow
from core.viz.membership_plots import (
    PLAIN_FAMILIES,
    SUMMARY_BASELINE,
    SUMMARY_ENSEMBLE,
    detector_family,
    detector_summary,
    family_rows,
)
from tests.helpers.jargon import jargon_in
from tests.stats.test_findings import _membership, _metric
from tests.viz.test_report import LABELS, _result

KEYS = ["loss", "zlib", "min_k_20", "min_k_pp_20", "slope", "slope_mean", "slope_2gram_mean", "recall"]


def _families_result():
    """A run of eight detectors, the slope variants separating the labels increasingly well."""
    base = _result()
    strength = {"loss": 0.2, "zlib": 0.1, "min_k_20": 0.3, "min_k_pp_20": 0.25, "slope": 0.4, "slope_mean": 1.2}
    strength |= {"slope_2gram_mean": 0.8, "recall": 0.05}
    scores = {k: [y * strength[k] + 0.37 * ((j * 7) % 5) for j, y in enumerate(LABELS)] for k in KEYS}
    samples = [SampleRow(str(j), y, {k: scores[k][j] for k in KEYS}) for j, y in enumerate(LABELS)]
    return replace(
        base,
        dataset="demo:famous-vs-fresh",
        method_keys=KEYS,
        samples=samples,
        method_labels={k: k.replace("_", " ") for k in KEYS},
        metrics={k: evaluate(LABELS, scores[k]) for k in KEYS},
    )


def test_each_key_belongs_to_its_family():
    assert [detector_family(k) for k in KEYS] == [
        "loss", "zlib", "min_k", "min_k_pp", "slope", "slope", "slope", "recall"
    ]  # fmt: skip
    assert detector_family("something_new") == "something_new"


def test_families_are_folded_to_their_best_member_best_first():
    result = _families_result()
    rows = family_rows(result)
    names = [plain for plain, _, _, _ in rows]
    assert names[-2:] == [SUMMARY_ENSEMBLE, SUMMARY_BASELINE]
    detectors = rows[:-2]
    assert len(detectors) == 6  # eight detectors, the three slopes folded into one
    aurocs = [metric.auroc for _, _, metric, _ in detectors]
    assert aurocs == sorted(aurocs, reverse=True)
    (slope,) = [row for row in detectors if row[0] == PLAIN_FAMILIES["slope"]]
    best_slope = max(("slope", "slope_mean", "slope_2gram_mean"), key=lambda k: result.metrics[k].auroc)
    assert slope[1] == result.method_labels[best_slope]
    assert slope[2] == result.metrics[best_slope]
    assert slope[3] == 3


def test_the_chart_leads_with_the_best_and_shows_no_jargon():
    figure = detector_summary(_families_result())
    (bar,) = figure.data
    assert bar.orientation == "h"
    assert list(bar.y)[0] == f"{PLAIN_FAMILIES['slope']} (best of 3)"
    assert bar.marker.color[0] != bar.marker.color[1]  # the best stands out
    assert figure.layout.yaxis.autorange == "reversed"  # best on top
    shown = [*bar.y, figure.layout.title.text, figure.layout.xaxis.title.text]
    shown += [a.text for a in figure.layout.annotations]
    assert [term for text in shown for term, _ in jargon_in(text)] == []
    assert "AUROC" in bar.hovertemplate  # the number stays one hover away


def test_the_verdict_names_the_demo_classes_in_its_own_words():
    strong = _membership(_metric(0.9, 0.8, 0.97), _metric(0.5, 0.4, 0.6))
    finding = membership_finding(replace(strong, dataset="demo:famous-vs-fresh"))
    assert finding.headline.startswith(
        "Strong evidence that the model saw the famous passages: its scores tell them from the freshly written "
        "passages far better than guessing."
    )
    unnamed = membership_finding(replace(strong, dataset="mine.csv"))
    assert "saw the texts labelled as seen (label 1)" in unnamed.headline
    assert "member" not in unnamed.headline
