"""Figures and HTML for the overlap page: the contamination heatmap and texts with matched spans marked."""

from __future__ import annotations

import html
from collections.abc import Sequence

import plotly.graph_objects as go

from core.overlap.report import ContaminationReport
from core.viz.style import heatmap_size, style_figure

OVERLAP_COLOURSCALE = "Reds"


def contamination_heatmap(report: ContaminationReport) -> go.Figure:
    """Eval sets (rows) x training sets (columns), cell = mean instance score, annotated.

    Sized by its cells: one eval set against one training set is one readable square, not a full-width bar.
    """
    z = [[report.scores.get((e, t)) for t in report.trains] for e in report.evals]
    text = [[("" if v is None else f"{v:.3f}") for v in row] for row in z]
    custom = [[report.matched.get((e, t), 0) for t in report.trains] for e in report.evals]
    figure = go.Figure(
        go.Heatmap(
            z=z,
            x=report.trains,
            y=report.evals,
            text=text,
            texttemplate="%{text}",
            customdata=custom,
            zmin=0.0,
            zmax=1.0,
            colorscale=OVERLAP_COLOURSCALE,
            colorbar={"title": {"text": "score"}, "thickness": 14},
            hoverongaps=False,
            hovertemplate="eval %{y}<br>train %{x}<br>mean score %{z:.4f}<br>%{customdata} instances matched"
            "<extra></extra>",
            xgap=2,
            ygap=2,
        )
    )
    title = "Contamination: mean instance score"
    width, height = heatmap_size(report.evals, report.trains, title=title)
    style_figure(
        figure,
        height=height + 40,  # room for the axis titles
        width=width + 40,
        title=title,
        xaxis={"title": {"text": "training set"}, "showgrid": False},
        yaxis={"title": {"text": "eval set"}, "showgrid": False},
    )
    return figure


def highlighted_html(text: str, spans: Sequence[tuple[int, int]], *, css_class: str = "ll-match") -> str:
    """``text`` escaped, with each character span wrapped in ``<mark>``; overlapping spans are merged."""
    merged: list[list[int]] = []
    for start, end in sorted((max(0, s), min(len(text), e)) for s, e in spans):
        if start >= end:
            continue
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out: list[str] = []
    position = 0
    for start, end in merged:
        out.append(html.escape(text[position:start]))
        out.append(f'<mark class="{css_class}">{html.escape(text[start:end])}</mark>')
        position = end
    out.append(html.escape(text[position:]))
    return "".join(out)
