"""Where a passage sits among freshly written passages of similar length, as a picture.

Each fresh passage is a light blue dot on one line (how predictable the model found it), those nearest to the
passage in kind teal, the passage a deep blue diamond: a viewer sees at a glance whether it stands out, and from
which text. The shared LeakLens style sets colours and
margins explicitly, so the figure reads the same in the dashboard and in an exported report. Perplexity
runs on a linear axis, more predictable to the right.
"""

from __future__ import annotations

import math

import plotly.graph_objects as go

from core.passage.placement import MethodPlacement
from core.passage.reading import chart_name, set_label, strip_title
from core.passage.result import InspectResult
from core.viz.style import plotly_text, style_figure

FRESH_COLOUR = "#9ecae1"
"""Light blue, not grey: grey means an inconclusive finding."""
KIND_COLOUR = "#2a9d8f"
"""Teal: the fresh passages nearest to the passage in kind, the ones it is read against first."""
PASSAGE_COLOUR = "#1f4e9c"
"""The passage itself: a deep blue, never the red that means strong evidence."""


def _perplexity(score: float) -> float:
    """Loss scores are −mean log-prob: perplexity = exp(−score), the number people know."""
    return math.exp(-score)


def placement_strip(
    placement: MethodPlacement,
    passage_name: str = "this passage",
    *,
    set_label: str = "freshly written passages",
    title: str | None = None,
) -> go.Figure:
    """The fresh passages' scores as dots and the passage's own as a marked diamond, on one axis.

    ``set_label`` names the dots as the verdict names the comparison set (e.g. "freshly written passages of
    78–171 tokens"). ``title`` (plain text, escaped) goes above the strip in place of the legend: it names
    the dots itself, and the diamond carries its own label.
    """
    is_loss = placement.method_key == "loss"
    values = [(_perplexity(s) if is_loss else s) for s in placement.calibration_scores]
    own = _perplexity(placement.score) if is_loss else placement.score
    passage_name = plotly_text(passage_name)
    # The axis speaks plain words (the strip sits under the verdict, Present mode too); the measure's own name,
    # for whoever runs the test, is in each dot's hover card.
    measure = "perplexity" if is_loss else plotly_text(placement.label)
    if is_loss:
        axis_title = "how surprising the model finds each passage (lower = more predictable)"
    elif placement.method_key.startswith("neighbourhood"):
        axis_title = "how much likelier the model finds each passage than close rewordings of it (higher = more)"
    else:
        axis_title = "how predictable the model finds each passage (higher = more)"
    figure = go.Figure()
    kind = set(placement.kind_positions)
    others = [v for i, v in enumerate(values) if i not in kind]
    figure.add_trace(
        go.Scatter(
            x=others,
            y=[0] * len(others),
            mode="markers",
            name=f"{plotly_text(set_label)} ({len(values)})",
            marker={"color": FRESH_COLOUR, "size": 10, "opacity": 0.6, "line": {"width": 0}},
            hovertemplate=f"fresh passage · {measure} %{{x:.3g}}<extra></extra>",
        )
    )
    if kind:
        kind_name = plotly_text(f"the {len(kind)} nearest in kind ({placement.kind_words})")
        figure.add_trace(
            go.Scatter(
                x=[values[i] for i in placement.kind_positions],
                y=[0] * len(kind),
                mode="markers",
                name=kind_name,
                marker={"color": KIND_COLOUR, "size": 11, "opacity": 0.9, "line": {"color": "#ffffff", "width": 1}},
                hovertemplate=f"fresh passage nearest in kind · {measure} %{{x:.3g}}<extra></extra>",
            )
        )
    figure.add_trace(
        go.Scatter(
            x=[own],
            y=[0],
            mode="markers+text",
            name=passage_name,
            text=[passage_name],
            textposition="top center",
            textfont={"color": PASSAGE_COLOUR, "size": 13},
            marker={"color": PASSAGE_COLOUR, "size": 16, "symbol": "diamond", "line": {"color": "#ffffff", "width": 1}},
            hovertemplate=f"{passage_name} · {measure} %{{x:.3g}}<extra></extra>",
        )
    )
    if title:
        style_figure(
            figure,
            height=170,
            showlegend=False,
            margin={"l": 12, "r": 12, "t": 44, "b": 12},
            title={"text": plotly_text(title), "font": {"size": 14}, "y": 0.96, "yanchor": "top"},
        )
    else:
        style_figure(
            figure,
            height=190,
            showlegend=True,
            margin={"l": 12, "r": 12, "t": 30, "b": 12},
            legend={"orientation": "h", "y": -0.55, "x": 0},
        )
    figure.update_yaxes(visible=False, range=[-1, 1.2])
    figure.update_xaxes(title_text=axis_title, autorange="reversed" if is_loss else True)
    return figure


def verdict_strip(result: InspectResult) -> go.Figure:
    """The chart under an inspection's verdict: its first passage among the fresh passages it was compared
    with, by the method that decided the verdict (the nearest in length when none were similar)."""
    placement = result.placements[0] if result.placements else None
    if placement is None:
        return style_figure(go.Figure(), height=120, title="No comparison with freshly written passages")
    deciding = placement.deciding
    name = chart_name(result, result.passages[0])
    return placement_strip(deciding, name, set_label=set_label(placement), title=strip_title(placement, deciding))
