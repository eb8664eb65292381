"""Figures comparing detectors by AUROC: across datasets, per dataset, as ROC curves and score histograms.

Shared by the benchmark page, the Results page and the HTML report, so all three show the same numbers.
Every figure marks the blind baseline (what a model-free text classifier reaches on the same labels),
because on date-split benchmarks a detector's AUROC means little without it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import plotly.graph_objects as go

from core.membership.benchmark import BenchmarkResult
from core.stats.metrics import MetricResult

BASELINE_KEY = "blind_baseline"
ENSEMBLE_KEY = "ensemble"
BASELINE_LABEL = "Blind baseline (no model)"
ENSEMBLE_LABEL = "Ensemble (all methods)"
MEMBER_COLOUR = "#d62728"
NONMEMBER_COLOUR = "#1f77b4"
BASELINE_COLOUR = "#7f7f7f"
ENSEMBLE_COLOUR = "#2ca02c"


def column_labels(results: Sequence[BenchmarkResult], *, with_model: bool | None = None) -> list[str]:
    """One distinct name per run for heatmap columns and pickers.

    The dataset, with the model when several models are shown (or ``with_model`` says so); runs that would still
    share a name (a sample and the full file, say) get their size, then their run id. Plotly merges equal category
    names into one column, which would silently show one run's numbers under both.
    """
    if with_model is None:
        with_model = len({r.model for r in results}) > 1
    labels = [f"{r.dataset} · {r.model}" if with_model else r.dataset for r in results]
    for suffix in (lambda r: f"n={r.n}", lambda r: f"run {r.run_id[:8]}"):
        counts = Counter(labels)
        labels = [f"{label} · {suffix(r)}" if counts[label] > 1 else label for label, r in zip(labels, results)]
    return labels


def _metric_rows(result: BenchmarkResult) -> list[tuple[str, str, MetricResult | None]]:
    rows = [(k, result.method_labels.get(k, k), result.metrics.get(k)) for k in result.method_keys]
    rows.append((ENSEMBLE_KEY, ENSEMBLE_LABEL, result.ensemble))
    rows.append((BASELINE_KEY, BASELINE_LABEL, result.blind_baseline))
    return rows


def auroc_heatmap(results: Sequence[BenchmarkResult]) -> go.Figure:
    """Methods (rows) × datasets (columns) coloured by AUROC; hover shows the 95% CI and TPR@1%FPR.

    Rows are the union of the runs' methods in first-seen order, then the ensemble and the blind baseline;
    a method a run did not compute is an empty cell.
    """
    columns = column_labels(results)
    row_keys: list[str] = []
    row_labels: dict[str, str] = {}
    for result in results:
        for key, label, _ in _metric_rows(result):
            if key not in row_labels and key not in (BASELINE_KEY, ENSEMBLE_KEY):
                row_keys.append(key)
                row_labels[key] = label
    row_keys += [ENSEMBLE_KEY, BASELINE_KEY]
    row_labels[ENSEMBLE_KEY], row_labels[BASELINE_KEY] = ENSEMBLE_LABEL, BASELINE_LABEL
    z: list[list[float | None]] = []
    custom: list[list[list[object]]] = []
    for key in row_keys:
        z_row, c_row = [], []
        for result in results:
            metric = {k: m for k, _, m in _metric_rows(result)}.get(key)
            if metric is None:
                z_row.append(None)
                c_row.append(["", "", "", "not computed"])
            else:
                z_row.append(metric.auroc)
                c_row.append([metric.ci[0], metric.ci[1], metric.tpr_at_1_fpr, f"n={metric.n}"])
        z.append(z_row)
        custom.append(c_row)
    figure = go.Figure(
        go.Heatmap(
            z=z,
            x=columns,
            y=[row_labels[k] for k in row_keys],
            customdata=custom,
            zmin=0.0,
            zmax=1.0,
            zmid=0.5,
            colorscale="RdBu_r",
            colorbar={"title": "AUROC"},
            texttemplate="%{z:.2f}",
            hovertemplate=(
                "%{y}<br>%{x}<br>AUROC %{z:.3f} (95% CI %{customdata[0]:.3f}–%{customdata[1]:.3f})"
                "<br>TPR@1%FPR %{customdata[2]:.3f} · %{customdata[3]}<extra></extra>"
            ),
            xgap=2,
            ygap=2,
        )
    )
    figure.update_layout(
        title="AUROC by method and dataset (0.5 = chance; compare with the blind baseline row)",
        yaxis={"autorange": "reversed"},
        height=max(320, 28 * len(row_keys) + 140),
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
    )
    return figure


def auroc_bars(result: BenchmarkResult) -> go.Figure:
    """One bar per method with its 95% CI as error bars; the blind baseline as a grey bar and a dashed line."""
    rows = [(k, label, m) for k, label, m in _metric_rows(result) if m is not None]
    colours = [
        BASELINE_COLOUR if k == BASELINE_KEY else ENSEMBLE_COLOUR if k == ENSEMBLE_KEY else "#4c78a8"
        for k, _, _ in rows
    ]
    figure = go.Figure(
        go.Bar(
            x=[label for _, label, _ in rows],
            y=[m.auroc for _, _, m in rows],
            marker_color=colours,
            error_y={
                "type": "data",
                "symmetric": False,
                "array": [m.ci[1] - m.auroc for _, _, m in rows],
                "arrayminus": [m.auroc - m.ci[0] for _, _, m in rows],
            },
            customdata=[[m.ci[0], m.ci[1]] for _, _, m in rows],
            hovertemplate="%{x}<br>AUROC %{y:.3f} (95% CI %{customdata[0]:.3f}–%{customdata[1]:.3f})<extra></extra>",
            name="AUROC",
        )
    )
    figure.add_hline(
        y=0.5, line_dash="dot", line_color="black", annotation_text="chance", annotation_position="bottom left"
    )
    if result.blind_baseline is not None:
        figure.add_hline(
            y=result.blind_baseline.auroc,
            line_dash="dash",
            line_color=BASELINE_COLOUR,
            annotation_text=f"blind baseline {result.blind_baseline.auroc:.3f}",
            annotation_position="top left",
        )
    figure.update_layout(
        title=f"{result.dataset} · {result.model}: AUROC with 95% CI (n={result.n})",
        yaxis={"title": "AUROC", "range": [0.0, 1.05]},
        xaxis={"tickangle": -40},
        showlegend=False,
        height=460,
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
    )
    return figure


def roc_overlay(result: BenchmarkResult, keys: Sequence[str] | None = None) -> go.Figure:
    """ROC curves of the chosen methods (default: all) on one dataset, with the chance diagonal.

    The blind baseline has no stored per-text scores, so its AUROC is shown as a legend entry instead.
    """
    keys = list(keys) if keys is not None else list(result.method_keys)
    figure = go.Figure()
    for key in keys:
        metric = result.metrics.get(key)
        if metric is None:
            continue
        fpr, tpr = result.roc(key)
        label = result.method_labels.get(key, key)
        figure.add_trace(
            go.Scatter(
                x=fpr,
                y=tpr,
                mode="lines",
                name=f"{label} ({metric.auroc:.3f})",
                hovertemplate=f"{label}<br>FPR %{{x:.3f}} · TPR %{{y:.3f}}<extra></extra>",
            )
        )
    figure.add_trace(
        go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="chance (0.500)", line={"dash": "dot", "color": "black"})
    )
    if result.blind_baseline is not None:
        figure.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="lines",
                name=f"{BASELINE_LABEL}: AUROC {result.blind_baseline.auroc:.3f}",
                line={"dash": "dash", "color": BASELINE_COLOUR},
            )
        )
    figure.update_layout(
        title=f"ROC curves · {result.dataset} · {result.model}",
        xaxis={"title": "false-positive rate", "range": [0, 1], "constrain": "domain"},
        yaxis={
            "title": "true-positive rate",
            "range": [0, 1.02],
            "scaleanchor": "x",
            "scaleratio": 1,
            "constrain": "domain",
        },
        height=640,
        # below the square, not inside it: a weak detector's curve can run anywhere, so no corner is safe
        legend={
            "font": {"size": 11},
            "orientation": "v",
            "x": 0,
            "y": -0.12,
            "xanchor": "left",
            "yanchor": "top",
        },
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
    )
    return figure


def member_score_histogram(result: BenchmarkResult, key: str, bins: int = 30) -> go.Figure:
    """Histograms of one method's scores for members and non-members (NaN scores left out)."""
    scores = result.scores(key)
    label = result.method_labels.get(key, key)
    figure = go.Figure()
    for value, name, colour in ((1, "members", MEMBER_COLOUR), (0, "non-members", NONMEMBER_COLOUR)):
        values = [s for s, y in zip(scores, result.labels, strict=True) if y == value and math.isfinite(s)]
        figure.add_trace(
            go.Histogram(x=values, name=f"{name} (n={len(values)})", marker_color=colour, opacity=0.6, nbinsx=bins)
        )
    metric = result.metrics.get(key)
    title = f"{label}: score by membership" + (f" · AUROC {metric.auroc:.3f}" if metric else "")
    figure.update_layout(
        barmode="overlay",
        title=title,
        xaxis={"title": "score (higher = more likely a member)"},
        yaxis={"title": "texts"},
        height=340,
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
    )
    return figure


def top_methods(result: BenchmarkResult, n: int = 6) -> list[str]:
    """The ``n`` method keys with the highest AUROC (for uncluttered ROC overlays)."""
    ranked = sorted(
        (k for k in result.method_keys if result.metrics.get(k) is not None),
        key=lambda k: -result.metrics[k].auroc,  # type: ignore[union-attr]
    )
    return ranked[:n]
