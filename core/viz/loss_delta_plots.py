"""Figures for the loss-delta test: the study's tables as pictures, per-problem losses, and how fine-tuning moved
each set's loss against the base model.

Pages and reports draw the same figures from a ``LeakageReport``; nothing here computes statistics. The
series are neutral blues and greys: red, amber, green, grey and purple say a finding's level (the verdict
banner) and nothing else. The loss-change table is HTML with every style inline, so it reads the same on a
page and in a saved report.
"""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import plotly.graph_objects as go

from core.data.demo import dataset_label
from core.loss_delta.delta import DELTA2_THRESHOLD, DeltaStats, LeakageReport, LossChange, ModelDelta
from core.viz.style import (
    AXIS_COLOUR,
    CHANCE_COLOUR,
    FONT_FAMILY,
    GRID_COLOUR,
    NEUTRAL_COLOUR,
    TEXT_COLOUR,
    plotly_text,
    style_figure,
)

TEST_COLOUR = "#1f4e79"
"""The benchmark's losses: dark blue."""
REF_COLOUR = "#9ecae1"
"""The reference set's losses: light blue, so the pair reads as one quantity measured twice."""
DELTA2_COLOUR = NEUTRAL_COLOUR
DIAGONAL_COLOUR = "#7f7f7f"
TOP_LEGEND = {"orientation": "h", "x": 0, "y": 1.0, "xanchor": "left", "yanchor": "bottom"}
NOTE_COLOUR = "#5b6670"
HEADER_BACKGROUND = "#f2f6f8"


def short_model_name(spec: str) -> str:
    """A model as a figure or table names it: a local folder by its name (never the whole path), a hub id or
    bundled name as given."""
    return Path(spec).name if spec.startswith(("/", "./", "../", "~")) and Path(spec).name else spec


def model_name(spec: str) -> str:
    """``short_model_name`` escaped for Plotly."""
    return plotly_text(short_model_name(spec))


def _groups(report: LeakageReport) -> list[tuple[str, DeltaStats]]:
    """(x label, stats) per bar group: each model's base model (once) just before the model itself."""
    groups: list[tuple[str, DeltaStats]] = []
    for m in report.models:
        if m.base_stats is not None:
            label = f"{model_name(m.base_model or 'base')} (base)"
            if label not in [g for g, _ in groups]:
                groups.append((label, m.base_stats))
        groups.append((model_name(m.model), m.stats))
    return groups


def delta_bars(report: LeakageReport) -> go.Figure:
    """Grouped bars of the mean loss on the benchmark and on the reference set per model (a model's base model
    beside it, so the bars show how each set's loss moved), each group labelled with Δ and its 95% CI.

    The chart sits under the verdict on the page and in Present mode, so it speaks plain words: loss is "average
    surprise", Δ is "benchmark − reference" and its interval "likely between"; the numbers line keeps the terms."""
    groups = _groups(report)
    labels = [label for label, _ in groups]
    fig = go.Figure()
    fig.add_bar(
        name=f"benchmark: {plotly_text(report.test_name)}",
        x=labels,
        y=[s.l_test for _, s in groups],
        marker_color=TEST_COLOUR,
        hovertemplate="%{x}<br>benchmark: average surprise %{y:.3f} per token<extra></extra>",
    )
    fig.add_bar(
        name=f"reference: {plotly_text(report.ref_name)}",
        x=labels,
        y=[s.l_ref for _, s in groups],
        marker_color=REF_COLOUR,
        hovertemplate="%{x}<br>reference: average surprise %{y:.3f} per token<extra></extra>",
    )
    top = max(max(s.l_test, s.l_ref) for _, s in groups)
    for label, s in groups:
        lo, hi = s.ci
        fig.add_annotation(
            x=label,
            y=max(s.l_test, s.l_ref),
            yshift=8,
            yanchor="bottom",
            showarrow=False,
            font={"size": 14, "color": CHANCE_COLOUR},
            text=(
                f"benchmark − reference: {s.delta:+.3f}<br>"
                f"<span style='font-size:12px'>likely between {lo:+.3f} and {hi:+.3f}</span>"
            ),
        )
    style_figure(
        fig,
        height=460,
        barmode="group",
        title="How surprised the model is by each set's solutions (lower = easier for it)",
        yaxis={"title": {"text": "average surprise per token"}, "range": [0, top * 1.3]},
        legend=TOP_LEGEND,
    )
    fig.update_xaxes(showgrid=False)
    return fig


def delta2_bars(report: LeakageReport, threshold: float = DELTA2_THRESHOLD) -> go.Figure:
    """Δ² = Δ_model − Δ_base per model with a base, with its 95% interval, the zero line and the study's
    threshold (a dashed line labelled beside it). Each bar's value and interval are written under it, where
    the interval's whisker cannot cross them."""
    rows = [m for m in report.models if m.delta2 is not None]
    values = [float(m.delta2) for m in rows if m.delta2 is not None]  # every row: rows have a Δ²
    lows = [m.delta2_ci[0] if m.delta2_ci else v for m, v in zip(rows, values)]
    highs = [m.delta2_ci[1] if m.delta2_ci else v for m, v in zip(rows, values)]
    labels = [
        f"{model_name(m.model)} vs {model_name(m.base_model or '')}<br><b>Δ² = {v:+.3f}</b><br>"
        f"95% CI {lo:+.3f} to {hi:+.3f}"
        for m, v, lo, hi in zip(rows, values, lows, highs)
    ]
    fig = go.Figure()
    fig.add_bar(
        x=labels,
        y=values,
        marker_color=DELTA2_COLOUR,
        name="Δ²",
        width=0.5,
        error_y={
            "type": "data",
            "symmetric": False,
            "array": [h - v for h, v in zip(highs, values)],
            "arrayminus": [v - lo for v, lo in zip(values, lows)],
            "color": CHANCE_COLOUR,
        },
        hovertemplate="Δ² %{y:+.3f}<extra></extra>",
    )
    ends = [0.0, threshold, *values, *lows, *highs]
    span = (max(ends) - min(ends)) or abs(threshold) or 0.05
    fig.add_hline(y=0, line_color=AXIS_COLOUR, line_width=1)
    fig.add_hline(
        y=threshold,
        line_dash="dash",
        line_color=CHANCE_COLOUR,
        annotation_font_color=CHANCE_COLOUR,
        annotation_text=f"study's threshold {threshold:+.3f}",
        annotation_position="bottom right",
    )
    style_figure(
        fig,
        height=440,
        title="Δ² = Δ_model − Δ_base (below zero: fine-tuning made the benchmark easier)",
        yaxis={"title": {"text": "Δ² (nats per token)"}, "range": [min(ends) - 0.2 * span, max(ends) + 0.2 * span]},
        showlegend=False,
    )
    fig.update_xaxes(showgrid=False)
    return fig


def problem_scatter(report: LeakageReport, model: str) -> go.Figure:
    """Paired: L_test vs L_ref per problem. Unpaired: the two loss distributions' quantiles (Q-Q).

    Points below the diagonal are problems where the benchmark solution was easier than its reference.
    """
    losses = next((ml for ml in report.losses if ml.model == model), None)
    if losses is None:
        raise ValueError(f"No losses for model {model!r} in this report.")
    fig = go.Figure()
    if report.paired:
        x, y = losses.ref_losses, losses.test_losses
        ids = [plotly_text(p.task_id) for p in losses.test]
        fig.add_scatter(
            x=x,
            y=y,
            mode="markers",
            name="problem",
            text=ids,
            marker={"color": TEST_COLOUR},
            hovertemplate="%{text}<br>L_ref %{x:.3f}<br>L_test %{y:.3f}<extra></extra>",
        )
        title = f"Per-problem loss, {model_name(model)}"
        x_title, y_title = "L_ref (reference problem)", "L_test (paired benchmark problem)"
    else:
        qs = np.linspace(0, 1, max(len(losses.test), len(losses.ref)))
        x, y = np.quantile(losses.ref_losses, qs), np.quantile(losses.test_losses, qs)
        fig.add_scatter(
            x=x,
            y=y,
            mode="markers",
            name="quantile",
            marker={"color": TEST_COLOUR},
            customdata=qs * 100,
            hovertemplate="quantile %{customdata:.0f}%<br>L_ref %{x:.3f}<br>L_test %{y:.3f}<extra></extra>",
        )
        title = f"Loss quantiles (unpaired sets), {model_name(model)}"
        x_title, y_title = "L_ref quantile", "L_test quantile"
    lo = float(min(np.min(x), np.min(y)))
    hi = float(max(np.max(x), np.max(y)))
    pad = 0.05 * (hi - lo or 1.0)
    fig.add_scatter(
        x=[lo - pad, hi + pad],
        y=[lo - pad, hi + pad],
        mode="lines",
        name="L_test = L_ref (below it: the benchmark was easier)",
        line={"dash": "dash", "color": DIAGONAL_COLOUR},
        hoverinfo="skip",
    )
    style_figure(
        fig,
        height=480,
        title=title,
        xaxis={"title": {"text": x_title}},
        yaxis={"title": {"text": y_title}},
        legend=TOP_LEGEND,
    )
    return fig


def _direction(change: LossChange) -> str:
    """The change in words, from its interval: a rise or a fall only when the interval excludes 0."""
    if change.ci[0] > 0:
        return "rose"
    if change.ci[1] < 0:
        return "fell"
    return "no clear change"


def _cell(text: str, *, header: bool = False, left: bool = False, wrap: bool = False) -> str:
    """One table cell with inline style: numbers right-aligned and kept on one line, so columns line up."""
    tag = "th" if header else "td"
    style = f"border:1px solid {GRID_COLOUR};padding:4px 10px;text-align:{'left' if left else 'right'};"
    style += "" if wrap else "white-space:nowrap;"
    style += f"background:{HEADER_BACKGROUND};font-weight:600;" if header else ""
    return f'<{tag} style="{style}">{html.escape(text)}</{tag}>'


def _change_row(role: str, name: str, change: LossChange) -> str:
    lo, hi = change.ci
    cells = (
        _cell(f"{role}: {dataset_label(name)}", left=True, wrap=True),
        _cell(f"{change.base:.3f}"),
        _cell(f"{change.tuned:.3f}"),
        _cell(f"{change.change:+.3f} ({lo:+.3f} to {hi:+.3f})"),
        _cell(_direction(change), left=True),
    )
    return f'<tr data-set="{role.lower()}">{"".join(cells)}</tr>'


def _change_table(report: LeakageReport, row: ModelDelta, test: LossChange, ref: LossChange) -> str:
    header = "".join(
        _cell(h, header=True, left=i in (0, 4), wrap=i == 0)
        for i, h in enumerate(
            ("Set", "Base model's loss", "Fine-tuned model's loss", "Change (95% interval)", "In words")
        )
    )
    tuned, base = short_model_name(row.model), short_model_name(row.base_model or "")
    title = html.escape(f"How fine-tuning moved each set's loss: {tuned} against its base model {base}")
    delta2 = f"{row.delta2:+.3f}" if row.delta2 is not None else "–"
    return (
        f'<div style="font-weight:600;margin:0 0 6px">{title}</div>'
        '<table style="border-collapse:collapse;width:100%;font-size:14px;margin:0 0 4px">'
        f"<thead><tr>{header}</tr></thead><tbody>"
        f"{_change_row('Benchmark', report.test_name, test)}{_change_row('Reference set', report.ref_name, ref)}"
        "</tbody></table>"
        f'<div style="font-size:12px;color:{NOTE_COLOUR};margin-bottom:8px">Mean loss per solution token (lower = '
        f"easier). Δ² {delta2} = the benchmark's change minus the reference set's: a Δ² below zero points at the "
        "benchmark only when the benchmark's own loss fell.</div>"
    )


def loss_change_html(report: LeakageReport) -> str:
    """Each set's loss on the base and the fine-tuned model side by side, with the change and its interval, one
    table per model with a base model; empty when no model has one."""
    tables = [
        _change_table(report, m, m.test_change, m.ref_change)
        for m in report.models
        if m.test_change is not None and m.ref_change is not None
    ]
    if not tables:
        return ""
    return (
        f'<div class="leaklens-loss-change" style="font-family:{html.escape(FONT_FAMILY)};color:{TEXT_COLOUR};'
        f'background:#ffffff;border:1px solid {GRID_COLOUR};border-radius:6px;padding:10px 12px;margin:0 0 12px">'
        f"{''.join(tables)}</div>"
    )
