"""One look for every LeakLens figure, set explicitly so a chart reads the same in the app and in a saved report.

Inside Streamlit, the "streamlit" chart theme fills in whatever a figure leaves unset (trace colours, fonts,
automatic margins); importing Streamlit also makes that theme Plotly's default template, whose colours are
placeholders only Streamlit's frontend replaces. A figure that leans on it turns black and clipped anywhere
else (an exported report). So every figure here names its template, background, fonts, trace colours and
label-fitting margins itself.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

TEMPLATE = "plotly_white"
BACKGROUND = "#ffffff"
TEXT_COLOUR = "#1b2630"
GRID_COLOUR = "#e3e8ec"
AXIS_COLOUR = "#8a96a0"
FONT_FAMILY = 'system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif'
PALETTE: tuple[str, ...] = (
    "#1f77b4",  # blue
    "#17a2b8",  # cyan
    "#8c564b",  # brown
    "#d6589f",  # pink
    "#b08d6a",  # tan
)
"""Qualitative colours of clearly different hues for series that must be told apart. Red, amber, green, grey
and purple are left out: on every page and report they mean only the finding levels (``core.viz.banner``)."""
DASHES: tuple[str, ...] = ("solid", "dash", "dashdot", "longdash")
"""Past the palette, series repeat a colour with another dash pattern rather than a near-identical colour."""
MEMBER_COLOUR = "#d6589f"
"""Members (seen in training) and the suspect set: pink, never the red of strong evidence."""
NONMEMBER_COLOUR = "#1f77b4"
NEUTRAL_COLOUR = "#4c78a8"
BASELINE_COLOUR = "#8c564b"
"""The blind baseline (wording alone): brown, apart from the levels' grey."""
CHANCE_COLOUR = "#1b2630"
CHAR_PX = 7.2
"""Rough width of one character at the figures' 13 px font, for sizing to labels."""
TITLE_CHAR_PX = 10.0
"""Rough width of one character of a 16 px title."""
MAX_WIDTH = 1100


def plotly_text(text: str) -> str:
    """Data (a dataset or model name) made literal for Plotly text, which reads tags like ``<b>`` as markup."""
    return html.escape(text, quote=False)


def series_style(index: int) -> tuple[str, str]:
    """(colour, dash) of the ``index``-th series: palette colours first, then the palette again dashed."""
    return PALETTE[index % len(PALETTE)], DASHES[(index // len(PALETTE)) % len(DASHES)]


def style_figure(figure: go.Figure, *, height: int, width: int | None = None, **layout: Any) -> go.Figure:
    """Apply the explicit LeakLens look in place (and return the figure); ``layout`` overrides the defaults.

    Margins start small and grow with ``automargin`` to fit tick labels and axis titles, so long method
    names are never cut at the edge while short ones waste no room.
    """
    figure.update_layout(
        template=TEMPLATE,
        paper_bgcolor=BACKGROUND,
        plot_bgcolor=BACKGROUND,
        colorway=list(PALETTE),
        font={"family": FONT_FAMILY, "color": TEXT_COLOUR, "size": 13},
        title={"x": 0.0, "xanchor": "left", "font": {"size": 16, "color": TEXT_COLOUR}},
        legend={"font": {"color": TEXT_COLOUR}, "bgcolor": "rgba(255,255,255,0)"},
        hoverlabel={"bgcolor": BACKGROUND, "bordercolor": AXIS_COLOUR, "font": {"color": TEXT_COLOUR}},
        margin={"l": 12, "r": 12, "t": 64, "b": 12, "pad": 4},
        height=height,
        width=width,
    )
    if layout:
        figure.update_layout(**layout)
    axis = {
        "automargin": True,
        "gridcolor": GRID_COLOUR,
        "linecolor": AXIS_COLOUR,
        "zerolinecolor": GRID_COLOUR,
        "tickfont": {"color": TEXT_COLOUR},
        "title": {"font": {"color": TEXT_COLOUR}},
    }
    figure.update_xaxes(**axis)
    figure.update_yaxes(**axis)
    return figure


def text_px(labels: Sequence[str]) -> int:
    """Estimated width in pixels of the longest label (Plotly's ``<br>`` breaks counted as new lines)."""
    longest = max((len(part) for label in labels for part in str(label).split("<br>")), default=0)
    return int(longest * CHAR_PX)


def wrap_label(text: str, width: int = 32) -> str:
    """``text`` broken at spaces into Plotly lines (``<br>``) of about ``width`` characters.

    Why: a heatmap column label longer than its cell is rotated by Plotly, and rotated labels on top of a
    heatmap run into its title; a few short lines stay level and above their own cell.
    """
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "<br>".join(lines)


def label_lines(labels: Sequence[str]) -> int:
    """The most Plotly lines (``<br>``-separated) any of ``labels`` takes."""
    return max((str(label).count("<br>") + 1 for label in labels), default=1)


def wants_horizontal_bars(labels: Sequence[str], width_px: int = 900) -> bool:
    """True when the category labels cannot sit side by side under vertical bars without rotating.

    Rotated labels (18 method names at 45°) are hard to read and eat the chart's height; horizontal
    bars give each name a line of its own.
    """
    return len(labels) * (text_px(labels) + 16) > width_px


def heatmap_size(
    row_labels: Sequence[str], col_labels: Sequence[str], *, title: str = "", colorbar: bool = True
) -> tuple[int, int]:
    """(width, height) in pixels that give each cell a readable size instead of stretching one cell full width.

    Columns are as wide as their labels (within limits); rows a fixed height; room is kept for the row
    labels, the title (never cut at the figure's edge) and the colour bar. Too many columns for
    ``MAX_WIDTH`` shrink the cells, and the column labels then rotate, so their height is budgeted below.
    """
    n_rows, n_cols = max(1, len(row_labels)), max(1, len(col_labels))
    col_px = text_px(col_labels)
    cell_w = min(240, max(90, col_px + 20))
    cell_h = 30
    label_w = text_px(row_labels) + 24
    extras = 130 if colorbar else 30
    width = max(label_w + n_cols * cell_w + extras, int(len(title) * TITLE_CHAR_PX) + 80)
    bottom = 50
    if width > MAX_WIDTH:
        width = MAX_WIDTH
        bottom = int(col_px * 0.75) + 40  # labels Plotly rotates to fit narrower cells
    height = 90 + n_rows * cell_h + bottom
    return width, max(220, height)
