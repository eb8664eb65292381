"""The benchmark-order test's chart, drawn from an ``OrderTest`` (no statistics here).

One chart carries the verdict: for each shard, how much likelier the published order of its examples is than
the average of its shuffles (one dark marker), beside the spread of the shuffles themselves around that same
average (a light box). A model that never saw the file puts the markers inside the boxes, scattered around the
zero line; a model that read the file in its order lifts them above the boxes, shard after shard. The colours
are the multiple-choice test's published / shuffled pair, set explicitly (``core.viz.style``).
"""

from __future__ import annotations

import plotly.graph_objects as go

from core.benchmark_order.run import OrderTest
from core.benchmark_order.statistic import ShardResult
from core.viz.mcq_plots import ORIGINAL_COLOUR, SHUFFLED_COLOUR, TOP_LEGEND
from core.viz.style import CHANCE_COLOUR, style_figure

SHUFFLED_LINE = "#6b9ac4"
"""The shuffles' box outline: a shade darker than its fill, so a box of five values still reads as a box."""
Y_TITLE = "how much likelier than the<br>average shuffle"
"""Plain words under the verdict (Present mode too); the hover card gives the unit (nats)."""


def _examples(shard: ShardResult) -> str:
    """The shard's examples as a reader counts them (1-based, inclusive)."""
    return f"example {shard.start + 1}" if shard.n_examples == 1 else f"examples {shard.start + 1}–{shard.stop}"


def _published_hover(shard: ShardResult) -> str:
    beaten = sum(1 for value in shard.shuffled if value < shard.canonical)
    low = min(shard.shuffled) - shard.shuffled_mean
    high = max(shard.shuffled) - shard.shuffled_mean
    every = "every other order" if shard.exhaustive else "shuffles"
    return (
        f"<b>Shard {shard.index + 1}</b> · {_examples(shard)}<br>"
        f"published order {shard.difference:+.2f} nats against the average shuffle<br>"
        f"likelier than {beaten} of {len(shard.shuffled)} {every}<br>"
        f"shuffles range {low:+.2f} to {high:+.2f}"
    )


def order_chart(test: OrderTest) -> go.Figure:
    """Per shard, the published order's log-likelihood minus its shuffles' mean (a marker) beside the shuffles'
    own log-likelihoods minus that mean (a box), with the dashed zero line of no preference."""
    result = test.result
    shards = result.shards
    numbers = [shard.index + 1 for shard in shards]
    fig = go.Figure()
    edges = [0.5, len(shards) + 0.5]
    # Legend names stay short so the legend keeps to one row above the plot at any width (a second row would run
    # into the title); the axis title says what the numbers measure.
    fig.add_scatter(  # a trace under the boxes, not a shape: its legend entry labels it without covering a shard
        name="no preference",
        x=edges,
        y=[0.0, 0.0],
        mode="lines",
        line={"color": CHANCE_COLOUR, "dash": "dash", "width": 1},
        hoverinfo="skip",
        legendrank=3,
    )
    fig.add_box(
        name="shuffled orders (spread)",
        x=[shard.index + 1 for shard in shards for _ in shard.shuffled],
        y=[value - shard.shuffled_mean for shard in shards for value in shard.shuffled],
        boxpoints=False,
        fillcolor=SHUFFLED_COLOUR,
        line={"color": SHUFFLED_LINE, "width": 1},
        whiskerwidth=0.6,
        hoverinfo="skip",
        legendrank=2,
    )
    fig.add_scatter(
        name="published order",
        x=numbers,
        y=[shard.difference for shard in shards],
        mode="markers",
        marker={"color": ORIGINAL_COLOUR, "size": 11, "symbol": "diamond", "line": {"color": "#ffffff", "width": 1}},
        text=[_published_hover(shard) for shard in shards],
        hovertemplate="%{text}<extra></extra>",
        legendrank=1,
    )
    style_figure(
        fig,
        height=440,
        title=(
            f"Published order against shuffles, shard by shard: likelier in {result.canonical_first} "
            f"of {len(shards)} shards"
        ),
        xaxis={
            "title": {"text": "shard (a run of consecutive examples, in the file's order)"},
            "showgrid": False,
            "range": edges,
            "tickmode": "auto" if len(shards) > 30 else "linear",
            "dtick": None if len(shards) > 30 else 1,
        },
        yaxis={"title": {"text": Y_TITLE}, "zeroline": False},
        legend=TOP_LEGEND,
    )
    return fig
