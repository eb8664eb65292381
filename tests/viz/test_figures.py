"""Every LeakLens figure carries its own look: explicit colours, label-fitting margins, honest legends.

Built after importing Streamlit, which makes its placeholder-colour template Plotly's default: a figure
that relied on it would draw every trace near-black outside the app (the exported report did).
"""

from __future__ import annotations

import colorsys
import json
import math
import re
from dataclasses import replace

import numpy as np
import plotly.graph_objects as go
import pytest
import streamlit  # noqa: F401  (sets Plotly's default template to Streamlit's placeholders, as in the app)

from core.mcq.study import MCQReport
from core.overlap.report import ContaminationReport
from core.stats.metrics import MetricResult, evaluate
from core.store.results import SampleRow
from core.viz.loss_delta_plots import delta2_bars, delta_bars, problem_scatter
from core.viz.mcq_plots import mcq_score_distribution, rank_histogram
from core.viz.membership_plots import auroc_bars, auroc_heatmap, member_score_histogram, roc_overlay
from core.viz.overlap_plots import contamination_heatmap
from core.viz.style import MAX_WIDTH, PALETTE, TEMPLATE, series_style, wants_horizontal_bars
from core.viz.token_curve import confidence_curve, confidence_figure
from tests.viz.test_heatmap import make_records
from tests.viz.test_report import LABELS, _leakage, _mcq_report, _result

LONG_LABELS = [f"Slope ({k}-gram normalised, mean-adjusted)" for k in range(1, 7)]


def _wide_result(n_methods: int = 12):
    """A run with many long method names, each separating the labels a little differently."""
    base = _result()
    keys = [f"m{i}" for i in range(n_methods)]
    scores = {
        k: [(y + 0.3) * (1 + i / 10) + 0.37 * ((j * (i + 3)) % 5) for j, y in enumerate(LABELS)]
        for i, k in enumerate(keys)
    }
    samples = [SampleRow(str(j), y, {k: scores[k][j] for k in keys}) for j, y in enumerate(LABELS)]
    return replace(
        base,
        method_keys=keys,
        samples=samples,
        method_labels={k: f"Slope ({i}-gram normalised, mean-adjusted)" for i, k in enumerate(keys)},
        metrics={k: evaluate(LABELS, scores[k]) for k in keys},
    )


@pytest.fixture(scope="module")
def mcq_report(tiny_lm) -> MCQReport:
    return _mcq_report(tiny_lm)


def _overlap(n_evals: int = 1, n_trains: int = 1) -> ContaminationReport:
    evals, trains = [f"eval{i}" for i in range(n_evals)], [f"train{i}" for i in range(n_trains)]
    pairs = [(e, t) for e in evals for t in trains]
    return ContaminationReport(evals, trains, {p: 0.25 for p in pairs}, {p: 2 for p in pairs}, {e: 8 for e in evals})


@pytest.fixture(scope="module")
def every_figure(mcq_report) -> dict[str, go.Figure]:
    result, leakage = _result(), _leakage()
    curve = confidence_curve(make_records("one two", [(0, 3), (3, 7)], [0.5, 0.25]), "A")
    return {
        "heatmap": auroc_heatmap([result, _result(dataset="books.csv")]),
        "bars": auroc_bars(result),
        "bars_horizontal": auroc_bars(_wide_result()),
        "roc": roc_overlay(result),
        "histogram": member_score_histogram(result, "loss"),
        "overlap": contamination_heatmap(_overlap()),
        "delta": delta_bars(leakage),
        "delta2": delta2_bars(leakage),
        "scatter": problem_scatter(leakage, "fine-tuned"),
        "mcq": mcq_score_distribution(mcq_report, "completion"),
        "ranks": rank_histogram(mcq_report),
        "token_curve": confidence_figure([curve]),
    }


def _trace_colours(trace) -> list[object]:
    """The colours a trace draws with, as set on the trace itself (None where left to a template)."""
    if isinstance(trace, go.Heatmap):
        return [trace.colorscale]
    if isinstance(trace, go.Scatter):
        mode = trace.mode or "lines"
        return ([trace.line.color] if "lines" in mode else []) + ([trace.marker.color] if "markers" in mode else [])
    return [trace.marker.color]


def _has_data(trace) -> bool:
    for axis in ("x", "y", "z"):
        values = getattr(trace, axis, None)
        if values is not None and any(v is not None for v in np.asarray(values, dtype=object).ravel()):
            return True
    return False


def test_every_figure_sets_its_own_colours_template_and_automargins(every_figure):
    for name, figure in every_figure.items():
        layout = figure.layout
        assert layout.paper_bgcolor == "#ffffff", name
        assert layout.plot_bgcolor == "#ffffff", name
        assert layout.font.color, name
        assert layout.font.family, name
        assert layout.template == go.Figure(layout={"template": TEMPLATE}).layout.template, name
        assert "#000001" not in figure.to_json(), f"{name} carries Streamlit's placeholder colours"
        for trace in figure.data:
            assert all(c is not None for c in _trace_colours(trace)), f"{name}: {trace.type} {trace.name!r}"
        axes = [getattr(layout, key) for key in layout if key.startswith(("xaxis", "yaxis"))]
        assert axes, name
        assert all(axis.automargin is True for axis in axes), name


def test_legend_entries_belong_to_drawn_traces(every_figure):
    for name, figure in every_figure.items():
        for trace in figure.data:
            if trace.showlegend is not False and figure.layout.showlegend is not False:
                assert _has_data(trace), f"{name}: legend entry {trace.name!r} has nothing drawn"
    # The blind baseline has no per-text scores: its markers are its two known ROC points, or nothing.
    roc = every_figure["roc"]
    (baseline,) = [t for t in roc.data if t.name.startswith("Blind baseline")]
    result = _result()
    assert list(baseline.x) == [0.01, 0.05]
    assert list(baseline.y) == [result.blind_baseline.tpr_at_1_fpr, result.blind_baseline.tpr_at_5_fpr]
    unknown = MetricResult(0.6, (0.5, 0.7), math.nan, math.nan, 8)
    bare = roc_overlay(replace(result, blind_baseline=unknown))
    assert not [t for t in bare.data if t.name.startswith("Blind baseline")]


def _hue_family(colour: str) -> str:
    """A colour's everyday name from its hue (brown: a dark orange-red), to catch two blues or two reds."""
    r, g, b = (int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
    hue, _, value = colorsys.rgb_to_hsv(r, g, b)
    degrees = hue * 360
    if degrees < 45 or degrees >= 345:
        return "brown" if value < 0.6 else ("red" if degrees < 15 or degrees >= 345 else "orange")
    for limit, family in ((75, "yellow"), (165, "green"), (195, "cyan"), (255, "blue"), (290, "purple")):
        if degrees < limit:
            return family
    return "pink"


def test_roc_curves_have_distinct_colours_of_distinct_hues():
    result = _wide_result(len(PALETTE))
    figure = roc_overlay(result)
    curves = figure.data[: len(PALETTE)]
    colours = [t.line.color for t in curves]
    assert len(set(colours)) == len(PALETTE)
    families = [_hue_family(c) for c in colours]
    assert len(set(families)) == len(families), families  # no two blues, no two reds
    assert "#000000" not in colours
    assert figure.data[len(PALETTE)].name.startswith("chance")
    # Past the palette a colour comes back with another dash pattern, so every curve stays distinguishable.
    many = roc_overlay(_wide_result(12))
    styles = [(t.line.color, t.line.dash) for t in many.data[:12]]
    assert len(set(styles)) == 12
    assert styles[8] == series_style(8)


def test_long_method_names_get_horizontal_bars():
    wide = auroc_bars(_wide_result())
    (bar,) = wide.data
    assert bar.orientation == "h"
    assert list(bar.y)[:2] == ["Slope (0-gram normalised, mean-adjusted)", "Slope (1-gram normalised, mean-adjusted)"]
    assert bar.error_x.array is not None
    assert wide.layout.yaxis.autorange == "reversed"  # first method on top
    assert {round(s.x0, 6) for s in wide.layout.shapes} == {0.5, round(_result().blind_baseline.auroc, 6)}
    assert not wide.layout.xaxis.tickangle
    assert not wide.layout.yaxis.tickangle
    short = auroc_bars(_result())
    assert short.data[0].orientation in (None, "v")
    assert wants_horizontal_bars(LONG_LABELS)
    assert not wants_horizontal_bars(["Loss", "zlib", "Min-K%"])


def test_member_and_nonmember_histograms_share_their_bins(every_figure):
    members, nonmembers = every_figure["histogram"].data
    assert members.xbins == nonmembers.xbins
    assert members.bingroup == nonmembers.bingroup
    assert members.autobinx is False
    assert nonmembers.autobinx is False
    values = [*members.x, *nonmembers.x]
    bins = members.xbins
    assert bins.start < min(values)
    assert bins.end > max(values)
    assert round((bins.end - bins.start) / bins.size) == 30


def test_heatmaps_are_sized_by_their_cells(every_figure):
    one = every_figure["overlap"].layout
    assert one.width
    assert one.width < 600
    assert one.height < 400  # one cell is a square, not a full-width band
    wider = contamination_heatmap(_overlap(3, 4)).layout
    assert one.width < wider.width <= MAX_WIDTH
    assert one.height < wider.height
    two = every_figure["heatmap"].layout
    six = auroc_heatmap([_result(dataset=f"set{i}.csv") for i in range(6)]).layout
    assert two.width < six.width <= MAX_WIDTH


def test_hover_labels_say_each_number_once(every_figure):
    for name, figure in every_figure.items():
        for trace in figure.data:
            fields = re.findall(r"%\{([^}:]+)", trace.hovertemplate or "")
            assert len(fields) == len(set(fields)), f"{name}: {trace.hovertemplate}"
    spec = json.loads(every_figure["overlap"].to_json())["data"][0]
    assert spec["texttemplate"] == "%{text}"
    assert "mean score %{z:.4f}" in spec["hovertemplate"]


def test_placement_strip_marks_the_passage_among_fresh_passages():
    from core.passage.placement import MethodPlacement
    from core.viz.passage_plots import PASSAGE_COLOUR, placement_strip

    placement = MethodPlacement(
        method_key="loss",
        label="Log-likelihood (−loss)",
        score=-2.5,
        percentile=100.0,
        n_at_least=0,
        calibration_scores=(-4.0, -3.9, -3.5),
    )
    figure = placement_strip(placement, "Passage <b>A</b>")
    fresh, own = figure.data
    assert len(fresh.x) == 3
    assert own.marker.color == PASSAGE_COLOUR
    assert own.x[0] == pytest.approx(math.exp(2.5))
    assert "&lt;b&gt;" in own.text[0]
    assert figure.layout.xaxis.autorange == "reversed"
    assert figure.layout.xaxis.automargin
