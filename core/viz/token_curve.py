"""Per-token confidence curves and their fitted slope line, as data and as a Plotly figure.

The curve is exactly the series the probability-slope detector fits (``slope_series``), so what the
chart shows and the slope score beside it can never disagree.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from core.engine.scoring import MAX_KGRAM, TokenRecords
from core.methods.slope import Values, adjusted_slope, linear_fit, slope_series
from core.viz.style import series_style, style_figure


@dataclass(frozen=True, eq=False)
class ConfidenceCurve:
    """y per token position, the least-squares line through it, and what the hover shows."""

    name: str
    values: Values
    kgram: int
    y: np.ndarray
    intercept: float
    slope: float
    tokens: tuple[str, ...]
    probs: np.ndarray
    ranks: np.ndarray

    @property
    def positions(self) -> np.ndarray:
        return np.arange(len(self.y))

    @property
    def fitted(self) -> np.ndarray:
        return self.intercept + self.slope * self.positions

    @property
    def mean_adjusted(self) -> float:
        """mean(y) − b, exactly as the mean-adjusted slope detector scores this curve."""
        return adjusted_slope(self.y, self.slope, "mean")

    @property
    def z_adjusted(self) -> float:
        """(mean(y) − b) / std(y), exactly as the z-adjusted detector scores it; 0 when y is constant."""
        return adjusted_slope(self.y, self.slope, "z")


def confidence_curve(records: TokenRecords, name: str, values: Values = "logprob", kgram: int = 0) -> ConfidenceCurve:
    """Build the curve for one passage. ``kgram`` 0 = raw values, 1..6 = k-gram normalised."""
    if not 0 <= kgram <= MAX_KGRAM:
        raise ValueError(f"kgram must be 0..{MAX_KGRAM}, got {kgram}.")
    y = slope_series(records, values, kgram)
    intercept, slope = linear_fit(y)
    return ConfidenceCurve(
        name=name,
        values=values,
        kgram=kgram,
        y=y,
        intercept=intercept,
        slope=slope,
        tokens=tuple(records.tokens),
        probs=np.exp(records.logprobs),
        ranks=np.asarray(records.rank),
    )


def y_axis_title(values: Values, kgram: int) -> str:
    base = "log-probability of each token" if values == "logprob" else "probability of each token"
    if kgram:
        base += f" minus its {kgram}-gram baseline"
    return base


def display_token(token: str) -> str:
    """A token made visible and safe for Plotly hover labels (which interpret a few HTML tags)."""
    shown = token.replace("\n", "↵").replace("\t", "⇥")
    return html.escape(shown, quote=True)


def confidence_figure(curves: Sequence[ConfidenceCurve], *, height: int = 420) -> go.Figure:
    """Each curve as a line of markers with its dashed fitted line; hover: token, probability, rank."""
    if not curves:
        raise ValueError("confidence_figure needs at least one curve.")
    figure = go.Figure()
    for index, curve in enumerate(curves):
        colour, _ = series_style(index)
        custom = np.column_stack(
            [np.array([display_token(t) for t in curve.tokens], dtype=object), curve.probs, curve.ranks]
        )
        figure.add_trace(
            go.Scatter(
                x=curve.positions,
                y=curve.y,
                mode="lines+markers",
                name=curve.name,
                line={"color": colour, "width": 1},
                marker={"color": colour, "size": 5},
                opacity=0.85,
                customdata=custom,
                hovertemplate=(
                    "<b>“%{customdata[0]}”</b><br>position %{x}<br>probability %{customdata[1]:.3g}"
                    "<br>rank %{customdata[2]:,}<br>y = %{y:.3f}<extra>" + html.escape(curve.name) + "</extra>"
                ),
            )
        )
        figure.add_trace(
            go.Scatter(
                x=curve.positions,
                y=curve.fitted,
                mode="lines",
                name=f"{curve.name}: fitted line, slope {curve.slope:+.3g} per token",
                line={"color": colour, "width": 3, "dash": "dash"},
                hoverinfo="skip",
            )
        )
    first = curves[0]
    style_figure(
        figure,
        height=height,
        margin={"t": 30},
        xaxis={"title": {"text": "token position in the passage"}},
        yaxis={"title": {"text": y_axis_title(first.values, first.kgram)}},
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "xanchor": "left", "x": 0},
        hovermode="closest",
    )
    return figure
