"""Figures for dataset inference: held-out score distributions, the p-value of each split, detector weights.

Pages and reports draw the same figures from a ``DatasetInference``; nothing here computes statistics.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.dataset_inference.run import DatasetInference
from core.viz.style import CHANCE_COLOUR, MEMBER_COLOUR, NEUTRAL_COLOUR, NONMEMBER_COLOUR, plotly_text, style_figure

SUSPECT_COLOUR = MEMBER_COLOUR
VALIDATION_COLOUR = NONMEMBER_COLOUR
ALPHA = 0.05


def held_out_scores(inference: DatasetInference) -> go.Figure:
    """Combined scores of the first split's held-out texts, suspect over validation, in shared bins."""
    split = inference.result.first_split
    if split is None:
        raise ValueError("This result holds no split to draw.")
    values = np.r_[split.suspect_scores, split.validation_scores]
    edges = np.histogram_bin_edges(values, bins=min(30, max(8, values.size // 4)))
    fig = go.Figure()
    for name, scores, colour in (
        (inference.suspect, split.suspect_scores, SUSPECT_COLOUR),
        (inference.validation, split.validation_scores, VALIDATION_COLOUR),
    ):
        counts, _ = np.histogram(scores, bins=edges)
        fig.add_bar(
            x=(edges[:-1] + edges[1:]) / 2,
            y=counts,
            marker_color=colour,
            opacity=0.85,
            name=f"{plotly_text(name)} (mean {scores.mean():+.2f})",
            hovertemplate="score %{x:.2f}: %{y} texts<extra></extra>",
        )
    # Side by side in shared bins: overlaid, translucent bars mix into a third colour that reads as a third set.
    style_figure(
        fig,
        height=380,
        barmode="group",
        bargap=0.15,
        bargroupgap=0,
        title="Combined detector score of held-out texts (one split): higher = more familiar to the model",
        xaxis={"title": {"text": "combined score (learnt on the other half)"}, "tickformat": ".1f"},
        yaxis={"title": {"text": "texts"}},
        legend={"orientation": "h", "x": 0, "y": 1.0, "xanchor": "left", "yanchor": "bottom"},
    )
    return fig


def split_p_values(inference: DatasetInference) -> go.Figure:
    """Each split's p-value on a log scale, with the 0.05 line and the combined (twice the median) p-value."""
    result = inference.result
    p_values = np.clip(np.asarray(result.split_p_values), 1e-300, 1.0)
    splits = [f"split {i + 1}" for i in range(p_values.size)]
    fig = go.Figure()
    fig.add_scatter(
        x=p_values,
        y=splits,
        mode="markers",
        marker={"color": NEUTRAL_COLOUR, "size": 10},
        name="split p-value",
        hovertemplate="%{y}: p = %{x:.3g}<extra></extra>",
    )
    fig.add_vline(
        x=ALPHA,
        line_dash="dot",
        line_color=CHANCE_COLOUR,
        annotation_text="0.05",
        annotation_font_color=CHANCE_COLOUR,
        annotation_position="top right",
    )
    fig.add_vline(
        x=max(result.p_value, 1e-300),
        line_color=SUSPECT_COLOUR,
        annotation_position="top left",
        annotation_text=f"combined p = {result.p_value:.2g}",
        annotation_font_color=SUSPECT_COLOUR,
    )
    style_figure(
        fig,
        height=140 + 24 * p_values.size,
        showlegend=False,
        title="p-value of each random split (left of the dotted line: significant at 0.05)",
        xaxis={"type": "log", "title": {"text": "p-value (log scale)"}, "dtick": 1, "exponentformat": "power"},
        yaxis={"autorange": "reversed"},
        margin={"t": 84},
    )
    return fig


def detector_weights(inference: DatasetInference) -> go.Figure:
    """The learnt weight of each detector (standardised), largest magnitude on top, as horizontal bars."""
    weights = inference.result.top_features(len(inference.result.weights))
    labels = [plotly_text(inference.scores.method_labels.get(key, key)) for key, _ in weights]
    values = [w for _, w in weights]
    fig = go.Figure()
    fig.add_bar(
        x=values,
        y=labels,
        orientation="h",
        text=[f"{v:+.2f}" for v in values],
        textposition="outside",
        marker_color=[SUSPECT_COLOUR if v > 0 else VALIDATION_COLOUR for v in values],
        textfont_color=CHANCE_COLOUR,
        cliponaxis=False,
    )
    reach = max((abs(v) for v in values), default=1.0) * 1.25 or 1.0
    style_figure(
        fig,
        height=120 + 28 * len(values),
        showlegend=False,
        title="Weight of each detector in the combined score (per standard deviation)",
        xaxis={"title": {"text": "weight (positive: higher in the suspect set)"}, "range": [-reach, reach]},
        yaxis={"autorange": "reversed"},
    )
    return fig
