"""Figures and HTML for the overlap page: each test item's overlap (the verdict's chart), the contamination
heatmap and texts with matched spans marked."""

from __future__ import annotations

import html
from collections.abc import Sequence

import plotly.graph_objects as go

from core.overlap.matching import Match
from core.overlap.report import ContaminationReport, column_names
from core.viz.style import MEMBER_COLOUR, heatmap_size, plotly_text, series_style, style_figure

OVERLAP_COLOURSCALE = "Blues"
"""Blues, not reds: red means strong evidence only (``core.viz.banner``)."""
MAX_ITEM_BARS = 60
"""Up to this many test items the chart has one labelled bar per item; more are drawn as a sorted curve."""


def item_overlap_chart(matches: Sequence[Match]) -> go.Figure:
    """How much of each test item was found in the training data, most first: what the verdict counts.

    One bar per test item (an item with no bar shares nothing); one series per (test set, training set) pair
    when there are several. Past ``MAX_ITEM_BARS`` items, each pair is a curve of its items' scores sorted
    from most to least overlap, so a test set of thousands stays readable.
    """
    columns = column_names(matches)
    pairs: dict[tuple[str, str], list[Match]] = {}
    for m in matches:
        pairs.setdefault((m.eval_name, columns[(m.index, m.train_dataset)]), []).append(m)
    several = len(pairs) > 1
    n_items = max((len(ms) for ms in pairs.values()), default=0)
    figure = go.Figure()
    if n_items <= MAX_ITEM_BARS:
        best: dict[tuple[str, str], float] = {}
        for ms in pairs.values():
            for m in ms:
                key = (m.eval_name, m.test_id)
                best[key] = max(best.get(key, 0.0), m.score)
        order = sorted(best, key=lambda k: (-best[k], k))
        evals = {e for e, _ in order}
        label = {k: k[1] if len(evals) == 1 else f"{k[0]} · {k[1]}" for k in order}
        for i, ((eval_name, column), ms) in enumerate(pairs.items()):
            colour = series_style(i)[0] if several else MEMBER_COLOUR
            by_key = {(m.eval_name, m.test_id): m.score for m in ms}
            keys = [k for k in order if k in by_key]
            figure.add_bar(
                x=[plotly_text(label[k]) for k in keys],
                y=[by_key[k] for k in keys],
                marker_color=colour,
                name=plotly_text(f"{eval_name} in {column}"),
                text=[f"{by_key[k]:.2f}" if by_key[k] > 0 else "" for k in keys],
                textposition="outside",
                cliponaxis=False,
                hovertemplate="%{x}: %{y:.3f}<extra>" + plotly_text(column) + "</extra>",
            )
        xaxis = {
            "title": {"text": "test item, most overlap first"},
            "type": "category",
            "tickangle": -45,
            "categoryorder": "array",
            "categoryarray": [plotly_text(label[k]) for k in order],
        }
    else:
        for i, ((eval_name, column), ms) in enumerate(pairs.items()):
            scores = sorted((m.score for m in ms), reverse=True)
            figure.add_scatter(
                x=list(range(1, len(scores) + 1)),
                y=scores,
                mode="lines",
                fill="tozeroy",
                line={"color": series_style(i)[0] if several else MEMBER_COLOUR},
                name=plotly_text(f"{eval_name} in {column}"),
                hovertemplate="item %{x} (by overlap): %{y:.3f}<extra></extra>",
            )
        xaxis = {"title": {"text": "test items, most overlap first"}}
    style_figure(
        figure,
        height=360,
        title="How much of each test item was found in the training data",
        xaxis=xaxis,
        yaxis={"title": {"text": "overlap (1 = copied verbatim)"}, "range": [0, 1.12]},
        showlegend=several,
        barmode="group",
        legend={"orientation": "h", "x": 0, "y": 1.0, "xanchor": "left", "yanchor": "bottom"},
    )
    return figure


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
