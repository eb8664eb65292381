"""The audit's charts: how far each test's evidence reaches against the line a result must cross to hold up once
every test is counted (Holm's correction), and the sampled items' continuations against fresh text."""

from __future__ import annotations

import math

import plotly.graph_objects as go

from core.audit.extraction import ITEM_CHANCE, ItemsExtraction
from core.audit.plan import TEST_BY_KEY
from core.audit.run import Audit
from core.viz.banner import LEVEL_STYLE
from core.viz.style import CHANCE_COLOUR, NEUTRAL_COLOUR, style_figure, text_px

CAP = 6.0
"""Evidence is drawn up to one in a million (a p-value of 10⁻⁶); stronger reads the same on the chart."""


def _strength(p: float | None) -> float:
    """How rare the result would be by chance, as a power of ten (2 = one in a hundred)."""
    if p is None or p <= 0:
        return CAP if p is not None else 0.0
    return min(CAP, -math.log10(p))


def evidence_chart(audit: Audit) -> go.Figure:
    """One bar per test that ran, coloured by its own reading: how rare its result is by chance after the
    correction for running several tests, against the line it must cross to count as evidence."""
    parts = list(reversed(audit.parts))  # the plan's first test on top
    titles = [TEST_BY_KEY[p.key].title if p.key in TEST_BY_KEY else p.key for p in parts]
    adjusted = [audit.verdict.adjusted.get(p.key) for p in parts]
    labels = [LEVEL_STYLE[p.finding.level][0] for p in parts]
    fig = go.Figure()
    fig.add_bar(
        y=titles,
        x=[_strength(a) for a in adjusted],
        orientation="h",
        marker={"color": [LEVEL_STYLE[p.finding.level][1] for p in parts]},
        text=[label if a is not None else f"{label} · no test to count" for label, a in zip(labels, adjusted)],
        textposition="outside",
        cliponaxis=False,
        customdata=[
            [
                "—" if p.p_value is None else f"{p.p_value:.2g}",
                "—" if a is None else f"{a:.2g}",
            ]
            for p, a in zip(parts, adjusted)
        ],
        hovertemplate="%{y}<br>chance of a result this strong: %{customdata[0]}<br>after counting every test: "
        "%{customdata[1]}<extra></extra>",
        showlegend=False,
    )
    line = -math.log10(audit.verdict.alpha)
    fig.add_vline(
        x=line,
        line={"color": CHANCE_COLOUR, "dash": "dash", "width": 1.5},
        annotation={"text": "counts as evidence beyond this line", "font": {"color": CHANCE_COLOUR, "size": 12}},
        annotation_position="top right",
    )
    held = len(audit.verdict.survivors)
    style_figure(
        fig,
        height=120 + 56 * len(parts),
        title=f"Which tests found evidence: {held} of {len(parts)} hold up once every test is counted",
        xaxis={
            "title": {"text": "how rare by chance (1 = one in 10, 2 = one in 100, …)"},
            "range": [0, CAP + 1.2],
            "dtick": 1,
        },
        yaxis={"automargin": True, "ticklabelstandoff": 6},
        margin={"l": 12 + text_px(titles) // 4, "r": 12, "t": 90, "b": 12, "pad": 4},
    )
    return fig


def extraction_chart(items: ItemsExtraction) -> go.Figure:
    """Each sampled item: how many tokens the model wrote word for word, darker where fresh text is rarely
    continued that far (the items that count)."""
    readings = sorted(items.readings, key=lambda r: -r.leading)
    fig = go.Figure()
    fig.add_bar(
        x=list(range(1, len(readings) + 1)),
        y=[r.leading for r in readings],
        marker={"color": [LEVEL_STYLE["strong"][1] if r.counts else NEUTRAL_COLOUR for r in readings]},
        customdata=[[r.index + 1, r.length, f"{r.chance:.0%}"] for r in readings],
        hovertemplate="item %{customdata[0]}: %{y} of %{customdata[1]} tokens word for word<br>fresh text "
        "continued as far: %{customdata[2]}<extra></extra>",
        showlegend=False,
    )
    counted = sum(r.counts for r in readings)
    style_figure(
        fig,
        height=380,
        title=(
            f"Items continued word for word: {counted} of {len(readings)} further than all but "
            f"{ITEM_CHANCE:.0%} of fresh text"
        ),
        xaxis={"title": {"text": "sampled items, most reproduced first"}, "showgrid": False},
        yaxis={"title": {"text": "tokens written word for word"}},
    )
    return fig
