"""Figures for the loss-delta test: the study's tables as pictures, and per-problem losses.

Pages and reports draw the same figures from a ``LeakageReport``; nothing here computes statistics.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.leakage.delta import DELTA2_THRESHOLD, LeakageReport
from core.viz.style import CHANCE_COLOUR, MEMBER_COLOUR, NONMEMBER_COLOUR, PALETTE, plotly_text, style_figure

TEST_COLOUR = MEMBER_COLOUR
REF_COLOUR = NONMEMBER_COLOUR
PASS_COLOUR = PALETTE[2]
FAIL_COLOUR = MEMBER_COLOUR
DIAGONAL_COLOUR = "#7f7f7f"


def delta_bars(report: LeakageReport) -> go.Figure:
    """Grouped bars of L_test and L_ref per model, each group labelled with its Δ and 95% CI."""
    models = [plotly_text(m.model) for m in report.models]
    fig = go.Figure()
    fig.add_bar(name=f"L_test ({plotly_text(report.test_name)})", x=models, y=[m.stats.l_test for m in report.models],
                marker_color=TEST_COLOUR)
    fig.add_bar(name=f"L_ref ({plotly_text(report.ref_name)})", x=models, y=[m.stats.l_ref for m in report.models],
                marker_color=REF_COLOUR)
    top = max(max(m.stats.l_test, m.stats.l_ref) for m in report.models)
    for label, m in zip(models, report.models):
        lo, hi = m.stats.ci
        fig.add_annotation(x=label, y=max(m.stats.l_test, m.stats.l_ref), yshift=18, showarrow=False,
                           font={"size": 14}, text=f"Δ = {m.stats.delta:+.3f} [{lo:+.3f}, {hi:+.3f}]")
    style_figure(
        fig, height=460, barmode="group", title="Loss on solution tokens: benchmark vs reference",
        yaxis={"title": {"text": "mean loss (nats per token)"}, "range": [0, top * 1.18]},
        legend={"orientation": "h", "x": 0, "y": 1.0, "xanchor": "left", "yanchor": "bottom"},
    )
    fig.update_xaxes(showgrid=False)
    return fig


def delta2_bars(report: LeakageReport, threshold: float = DELTA2_THRESHOLD) -> go.Figure:
    """Δ² = Δ_model − Δ_base per model with a base; bars below the threshold line are red."""
    rows = [m for m in report.models if m.delta2 is not None]
    labels = [f"{plotly_text(m.model)}<br>vs {plotly_text(m.base_model or '')}" for m in rows]
    values = [m.delta2 for m in rows]
    lows = [m.delta2 - m.delta2_ci[0] if m.delta2_ci else 0.0 for m in rows]
    highs = [m.delta2_ci[1] - m.delta2 if m.delta2_ci else 0.0 for m in rows]
    fig = go.Figure()
    fig.add_bar(x=labels, y=values, marker_color=[FAIL_COLOUR if v < threshold else PASS_COLOUR for v in values],
                error_y={"type": "data", "symmetric": False, "array": highs, "arrayminus": lows},
                text=[f"{v:+.4f}" for v in values], textposition="outside", name="Δ²")
    fig.add_hline(y=threshold, line_dash="dash", line_color=CHANCE_COLOUR, annotation_font_color=CHANCE_COLOUR,
                  annotation_text=f"threshold {threshold:+.3f}", annotation_position="bottom right")
    fig.update_traces(error_y_color=CHANCE_COLOUR, textfont_color=CHANCE_COLOUR)
    style_figure(fig, height=440, title="Δ² = Δ_model − Δ_base (lower = more benchmark text in fine-tuning)",
                 yaxis={"title": {"text": "Δ² (nats)"}}, showlegend=False)
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
        fig.add_scatter(x=x, y=y, mode="markers", name="problem", text=ids, marker={"color": TEST_COLOUR},
                        hovertemplate="%{text}<br>L_ref %{x:.3f}<br>L_test %{y:.3f}<extra></extra>")
        title = f"Per-problem loss, {plotly_text(model)}"
        x_title, y_title = "L_ref (reference problem)", "L_test (paired benchmark problem)"
    else:
        qs = np.linspace(0, 1, max(len(losses.test), len(losses.ref)))
        x, y = np.quantile(losses.ref_losses, qs), np.quantile(losses.test_losses, qs)
        fig.add_scatter(x=x, y=y, mode="markers", name="quantile", marker={"color": TEST_COLOUR},
                        customdata=qs * 100,
                        hovertemplate="quantile %{customdata:.0f}%<br>L_ref %{x:.3f}<br>L_test %{y:.3f}<extra></extra>")
        title = f"Loss quantiles (unpaired sets), {plotly_text(model)}"
        x_title, y_title = "L_ref quantile", "L_test quantile"
    lo = float(min(np.min(x), np.min(y)))
    hi = float(max(np.max(x), np.max(y)))
    pad = 0.05 * (hi - lo or 1.0)
    fig.add_scatter(x=[lo - pad, hi + pad], y=[lo - pad, hi + pad], mode="lines", name="L_test = L_ref",
                    line={"dash": "dash", "color": DIAGONAL_COLOUR}, hoverinfo="skip")
    style_figure(fig, height=480, title=title, xaxis={"title": {"text": x_title}},
                 yaxis={"title": {"text": y_title}},
                 legend={"orientation": "h", "x": 0, "y": 1.0, "xanchor": "left", "yanchor": "bottom"})
    return fig
