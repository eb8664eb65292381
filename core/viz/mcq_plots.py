"""Figures for the multiple-choice memorisation test, drawn from an ``MCQReport`` (no statistics here).

The series are neutral blues: red, amber, green, grey and purple say a finding's level (the verdict banner)
and nothing else.
"""

from __future__ import annotations

import plotly.graph_objects as go

from core.mcq.completion import ProbeKind
from core.mcq.study import MCQReport
from core.viz.style import CHANCE_COLOUR, style_figure

ORIGINAL_COLOUR = "#1f4e79"
"""The published option order: dark blue."""
SHUFFLED_COLOUR = "#9ecae1"
"""The shuffled options, the yardstick: light blue."""
TOP_LEGEND = {"orientation": "h", "x": 0, "y": 1.0, "xanchor": "left", "yanchor": "bottom"}
PROBE_TITLES = {
    "next_token": "next-token probe",
    "completion": "completion probe (exact)",
    "similar": "completion probe (similar)",
}
SCORE_TITLES = {
    "completion": "Options the model finishes word for word",
    "next_token": "Options whose next word the model gets right",
    "similar": "Options the model finishes closely",
}


def mcq_score_distribution(report: MCQReport, kind: ProbeKind) -> go.Figure:
    """Questions per score 0..n, the published option order next to the shuffled options."""
    original, shuffled = report.original.summary(kind), report.shuffled.summary(kind)
    scores = [str(s) for s in range(len(original.distribution))]
    fig = go.Figure()
    fig.add_bar(
        name=f"published order (mean {original.mean:.2f})",
        x=scores,
        y=list(original.distribution),
        marker_color=ORIGINAL_COLOUR,
        text=list(original.distribution),
        textposition="outside",
        hovertemplate="%{y} questions with %{x} options right (published order)<extra></extra>",
    )
    fig.add_bar(
        name=f"shuffled options (mean {shuffled.mean:.2f})",
        x=scores,
        y=list(shuffled.distribution),
        marker_color=SHUFFLED_COLOUR,
        text=list(shuffled.distribution),
        textposition="outside",
        hovertemplate="%{y} questions with %{x} options right (shuffled)<extra></extra>",
    )
    fig.update_traces(textfont_color=CHANCE_COLOUR, cliponaxis=False)
    top = max([*original.distribution, *shuffled.distribution, 1])
    style_figure(
        fig,
        height=420,
        barmode="group",
        title=f"{SCORE_TITLES[kind]}: published order vs shuffled",
        xaxis={"title": {"text": f"options per question, of {len(scores) - 1}"}, "showgrid": False},
        yaxis={"title": {"text": "questions"}, "range": [0, top * 1.15]},
        legend=TOP_LEGEND,
    )
    return fig


def rank_histogram(report: MCQReport) -> go.Figure:
    """Where the published option order ranks among all orders; flat = no preference, a spike at 1 = leak."""
    if report.permutation is None:
        raise ValueError("The report has no option-order test.")
    result = report.permutation
    ranks = [q.rank for q in result.questions]
    counts = [ranks.count(r) for r in range(1, result.n_orders + 1)]
    expected = len(ranks) / result.n_orders
    fig = go.Figure()
    fig.add_bar(
        x=list(range(1, result.n_orders + 1)),
        y=counts,
        marker_color=ORIGINAL_COLOUR,
        name="questions",
        hovertemplate="rank %{x}: %{y} questions<extra></extra>",
    )
    fig.add_scatter(
        x=[0.5, result.n_orders + 0.5],
        y=[expected, expected],
        mode="lines",
        line={"dash": "dash", "color": CHANCE_COLOUR},
        name="expected without a preference",
    )
    style_figure(
        fig,
        height=420,
        title=(
            f"Rank of the original option order among {result.n_orders} orders "
            f"(mean percentile {result.mean_percentile:.2f}, p = {result.p_value_percentile:.2g})"
        ),
        xaxis={"title": {"text": "rank (1 = original order most likely)"}, "showgrid": False},
        yaxis={"title": {"text": "questions"}, "rangemode": "tozero", "dtick": 1 if max(counts) <= 10 else None},
        legend=TOP_LEGEND,
    )
    return fig
