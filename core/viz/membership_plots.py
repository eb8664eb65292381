"""Figures comparing detectors by AUROC: across datasets, per dataset, as ROC curves and score histograms.

Shared by the benchmark page, the Results page and the HTML report, so all three show the same numbers.
Every figure marks the blind baseline (what a model-free text classifier reaches on the same labels),
because on date-split benchmarks a detector's AUROC means little without it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from core.data.demo import dataset_label
from core.membership.benchmark import BenchmarkResult
from core.stats.metrics import MetricResult
from core.viz.style import (
    BACKGROUND,
    BASELINE_COLOUR,
    CHANCE_COLOUR,
    MEMBER_COLOUR,
    NEUTRAL_COLOUR,
    NONMEMBER_COLOUR,
    heatmap_size,
    label_lines,
    plotly_text,
    series_style,
    style_figure,
    wants_horizontal_bars,
    wrap_label,
)

BASELINE_KEY = "blind_baseline"
ENSEMBLE_KEY = "ensemble"
BASELINE_LABEL = "Blind baseline (no model)"
ENSEMBLE_LABEL = "Ensemble (all methods)"
ENSEMBLE_COLOUR = "#17a2b8"
"""Cyan: green means a finding level only."""
AUROC_COLOURSCALE = [[0.0, BASELINE_COLOUR], [0.5, "#ffffff"], [1.0, "#08306b"]]
"""Diverging around chance: brown below 0.5, white at 0.5, dark blue where members score higher. No red:
red means strong evidence only (``core.viz.banner``), and a cell is one detector's AUROC, not a verdict."""


def column_labels(results: Sequence[BenchmarkResult], *, with_model: bool | None = None) -> list[str]:
    """One distinct name per run for heatmap columns and pickers.

    The dataset as people call it (a demo's title), with the model when several models are shown (or
    ``with_model`` says so); runs that would still share a name (a sample and the full file, say) get their size,
    then their run id. Plotly merges equal category names into one column, which would silently show one run's
    numbers under both.
    """
    if with_model is None:
        with_model = len({r.model for r in results}) > 1
    names = [dataset_label(r.dataset) for r in results]
    labels = [f"{name} · {r.model}" if with_model else name for name, r in zip(names, results)]
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
    a method a run did not compute is an empty cell. The figure is sized by its cells, not stretched.
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
        z_row: list[float | None] = []
        c_row: list[list[object]] = []
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
    y = [row_labels[k] for k in row_keys]
    figure = go.Figure(
        go.Heatmap(
            z=z,
            x=columns,
            y=y,
            customdata=custom,
            zmin=0.0,
            zmax=1.0,
            zmid=0.5,
            colorscale=AUROC_COLOURSCALE,
            colorbar={"title": {"text": "AUROC"}, "thickness": 14},
            texttemplate="%{z:.2f}",
            hoverongaps=False,
            hovertemplate=(
                "%{y}<br>%{x}<br>AUROC %{z:.3f} (95% CI %{customdata[0]:.3f}–%{customdata[1]:.3f})"
                "<br>TPR@1%FPR %{customdata[2]:.3f} · %{customdata[3]}<extra></extra>"
            ),
            xgap=2,
            ygap=2,
        )
    )
    title = "AUROC by method and dataset (0.5 = chance)"
    # Column names on top, next to the title and right above their cells (a long list of methods would put them
    # far below), each part of "data · model" on a line of its own so a column is no wider than its longest part.
    # Long parts are wrapped too: a label wider than its cell would be rotated by Plotly into the title.
    ticks = ["<br>".join(wrap_label(part) for part in plotly_text(c).split(" · ")) for c in columns]
    width, height = heatmap_size(y, ticks, title=title)
    label_room = 18 * label_lines(ticks)
    style_figure(
        figure,
        height=height + label_room,
        width=width,
        title=title,
        margin={"l": 12, "r": 12, "t": 64 + label_room, "b": 12, "pad": 4},
    )
    figure.update_layout(title={"yref": "container", "y": 1.0, "yanchor": "top", "pad": {"t": 14}})
    figure.update_yaxes(autorange="reversed", showgrid=False)
    figure.update_xaxes(showgrid=False, side="top", tickvals=columns, ticktext=ticks, tickangle=0)
    return figure


def auroc_bars(result: BenchmarkResult) -> go.Figure:
    """One bar per method with its 95% CI as error bars; the blind baseline as a grey bar and a dashed line.

    Long method names make the bars horizontal (one readable line per name) instead of rotating the labels.
    """
    rows = [(k, label, m) for k, label, m in _metric_rows(result) if m is not None]
    labels = [label for _, label, _ in rows]
    colours = [
        BASELINE_COLOUR if k == BASELINE_KEY else ENSEMBLE_COLOUR if k == ENSEMBLE_KEY else NEUTRAL_COLOUR
        for k, _, _ in rows
    ]
    values = [m.auroc for _, _, m in rows]
    errors = {
        "type": "data",
        "symmetric": False,
        "array": [m.ci[1] - m.auroc for _, _, m in rows],
        "arrayminus": [m.auroc - m.ci[0] for _, _, m in rows],
        "color": CHANCE_COLOUR,
        "thickness": 1.2,
    }
    horizontal = wants_horizontal_bars(labels)
    common: dict[str, object] = {
        "marker_color": colours,
        "customdata": [[m.ci[0], m.ci[1]] for _, _, m in rows],
        "name": "AUROC",
    }
    name, value = ("y", "x") if horizontal else ("x", "y")
    common["hovertemplate"] = (
        f"%{{{name}}}<br>AUROC %{{{value}:.3f}} (95% CI %{{customdata[0]:.3f}}–%{{customdata[1]:.3f}})<extra></extra>"
    )
    if horizontal:
        bar = go.Bar(y=labels, x=values, orientation="h", error_x=errors, **common)
    else:
        bar = go.Bar(x=labels, y=values, error_y=errors, **common)
    figure = go.Figure(bar)
    _reference_lines(figure, result.blind_baseline, horizontal)
    value_axis = {"title": {"text": "AUROC (0.5 = chance)"}, "range": [0.0, 1.05]}
    name = plotly_text(dataset_label(result.dataset))
    title = f"{name} · {plotly_text(result.model)}: AUROC with 95% CI (n={result.n})"
    if horizontal:
        style_figure(figure, height=max(300, 30 * len(rows) + 150), title=title, showlegend=False, xaxis=value_axis)
        figure.update_yaxes(autorange="reversed", showgrid=False)  # first method on top, baseline last
    else:
        style_figure(figure, height=460, title=title, showlegend=False, yaxis=value_axis)
        figure.update_xaxes(showgrid=False)
    return figure


def _reference_lines(figure: go.Figure, baseline: MetricResult | None, horizontal: bool) -> None:
    """Chance (0.5) and the blind baseline's AUROC as labelled lines across the bars.

    On horizontal bars the labels sit above the plot, each on its line's far side from the other line, so
    two close values never print over each other or over a bar.
    """
    lines = [(0.5, "chance", CHANCE_COLOUR, "dot")]
    if baseline is not None:
        lines.append((baseline.auroc, f"blind baseline {baseline.auroc:.3f}", BASELINE_COLOUR, "dash"))
    if not horizontal:
        for (value, text, colour, dash), where in zip(lines, ("bottom left", "top left")):
            figure.add_hline(
                value,
                line_dash=dash,
                line_color=colour,
                line_width=2,
                annotation_text=text,
                annotation_position=where,
                annotation_font_color=colour,
            )
        return
    lowest = min(range(len(lines)), key=lambda i: lines[i][0])
    for index, (value, text, colour, dash) in enumerate(lines):
        figure.add_vline(value, line_dash=dash, line_color=colour, line_width=2)
        side = "right" if index == lowest and len(lines) > 1 else "left"
        figure.add_annotation(
            x=value,
            y=1.0,
            xref="x",
            yref="paper",
            yanchor="bottom",
            xanchor=side,
            text=text,
            showarrow=False,
            font={"color": colour, "size": 12},
        )


def roc_overlay(result: BenchmarkResult, keys: Sequence[str] | None = None) -> go.Figure:
    """ROC curves of the chosen methods (default: all) on one dataset, with the chance diagonal.

    Each curve has its own palette colour. The blind baseline keeps no per-text scores, so it has no curve:
    its two known ROC points (the true-positive rate at 1% and 5% false positives) are drawn as markers.
    """
    keys = list(keys) if keys is not None else list(result.method_keys)
    figure = go.Figure()
    drawn = 0
    for key in keys:
        metric = result.metrics.get(key)
        if metric is None:
            continue
        fpr, tpr = result.roc(key)
        label = result.method_labels.get(key, key)
        colour, dash = series_style(drawn)
        drawn += 1
        figure.add_trace(
            go.Scatter(
                x=fpr,
                y=tpr,
                mode="lines",
                name=f"{label} ({metric.auroc:.3f})",
                line={"color": colour, "dash": dash, "width": 2.2},
                hovertemplate=f"{plotly_text(label)}<br>FPR %{{x:.3f}} · TPR %{{y:.3f}}<extra></extra>",
            )
        )
    figure.add_trace(
        go.Scatter(
            x=[0, 1],
            y=[0, 1],
            mode="lines",
            name="chance (0.500)",
            hoverinfo="skip",
            line={"dash": "dot", "color": CHANCE_COLOUR, "width": 1.2},
        )
    )
    baseline = result.blind_baseline
    if baseline is not None:
        points = [
            (fpr, tpr)
            for fpr, tpr in ((0.01, baseline.tpr_at_1_fpr), (0.05, baseline.tpr_at_5_fpr))
            if math.isfinite(tpr)
        ]
        if points:
            figure.add_trace(
                go.Scatter(
                    x=[p[0] for p in points],
                    y=[p[1] for p in points],
                    mode="markers",
                    # The diamonds are two points, not a curve: say what they mark.
                    name=f"{BASELINE_LABEL}, AUROC {baseline.auroc:.3f}: share of members it catches at 1% and 5% "
                    "false alarms",
                    marker={
                        "symbol": "diamond",
                        "size": 10,
                        "color": BASELINE_COLOUR,
                        "line": {"color": CHANCE_COLOUR, "width": 1},
                    },
                    hovertemplate="Blind baseline (no model)<br>TPR %{y:.3f} at FPR %{x:.0%}<extra></extra>",
                )
            )
    legend_rows = len(figure.data)
    style_figure(
        figure,
        height=600 + 22 * legend_rows,  # the square keeps its size however many curves are listed below it
        title=f"ROC curves · {plotly_text(dataset_label(result.dataset))} · {plotly_text(result.model)}",
        xaxis={"title": {"text": "false-positive rate"}, "range": [0, 1], "constrain": "domain"},
        yaxis={
            "title": {"text": "true-positive rate"},
            "range": [0, 1.02],
            "scaleanchor": "x",
            "scaleratio": 1,
            "constrain": "domain",
        },
        # below the square, not inside it: a weak detector's curve can run anywhere, so no corner is safe;
        # one entry a row: long detector names in a half-width column would run into each other side by side
        legend={
            "font": {"size": 12},
            "orientation": "h",
            "entrywidth": 1.0,
            "entrywidthmode": "fraction",
            "x": 0,
            "y": -0.1,
            "xanchor": "left",
            "yanchor": "top",
        },
    )
    return figure


def member_score_histogram(result: BenchmarkResult, key: str, bins: int = 30) -> go.Figure:
    """Histograms of one method's scores for members and non-members (NaN scores left out).

    Both sets share one set of bin edges: with bins of their own, overlaid bars of different widths would
    make the two distributions look different where they are not.
    """
    scores = result.scores(key)
    label = result.method_labels.get(key, key)
    split = {
        value: [s for s, y in zip(scores, result.labels, strict=True) if y == value and math.isfinite(s)]
        for value in (1, 0)
    }
    edges = shared_bins([*split[1], *split[0]], bins)
    figure = go.Figure()
    for value, name, colour in ((1, "members", MEMBER_COLOUR), (0, "non-members", NONMEMBER_COLOUR)):
        values = split[value]
        if not values:
            continue  # no legend entry for a set with nothing to draw
        figure.add_trace(
            go.Histogram(
                x=values,
                name=f"{name} (n={len(values)})",
                marker={"color": colour, "line": {"color": BACKGROUND, "width": 0.5}},
                opacity=0.6,
                xbins=edges,
                autobinx=False,
                bingroup="scores",
                hovertemplate=f"{name}<br>score %{{x}}<br>%{{y}} texts<extra></extra>",
            )
        )
    metric = result.metrics.get(key)
    title = f"{plotly_text(label)}: score by membership" + (f" · AUROC {metric.auroc:.3f}" if metric else "")
    style_figure(
        figure,
        height=340,
        title=title,
        barmode="overlay",
        xaxis={"title": {"text": "score (higher = more likely a member)"}},
        yaxis={"title": {"text": "texts"}},
        legend={"orientation": "h", "x": 0, "y": 1.0, "xanchor": "left", "yanchor": "bottom"},
    )
    return figure


def shared_bins(values: Sequence[float], bins: int) -> dict[str, float]:
    """Plotly ``xbins`` (start, end, size) covering every value in ``bins`` equal steps."""
    if not values:
        return {"start": 0.0, "end": 1.0, "size": 1.0 / max(1, bins)}
    lo, hi = float(np.min(values)), float(np.max(values))
    if hi <= lo:
        return {"start": lo - 0.5, "end": hi + 0.5, "size": 1.0}
    size = (hi - lo) / max(1, bins - 1)
    return {"start": lo - size / 2, "end": hi + size / 2, "size": size}  # the extremes sit mid-bin, never on an edge


def top_methods(result: BenchmarkResult, n: int = 6) -> list[str]:
    """The ``n`` method keys with the highest AUROC (for uncluttered ROC overlays)."""
    ranked = sorted(
        (k for k in result.method_keys if result.metrics.get(k) is not None),
        key=lambda k: -result.metrics[k].auroc,  # type: ignore[union-attr]
    )
    return ranked[:n]


PLAIN_FAMILIES: dict[str, str] = {
    "loss": "How familiar the whole text is",
    "zlib": "Familiarity beyond plain repetition",
    "min_k_pp": "Familiarity of its least expected words, calibrated",
    "min_k": "Familiarity of its least expected words",
    "slope": "Confidence rising through the text",
    "reference": "Familiarity compared with a second model",
    "recall": "Familiarity after a non-member prefix",
    "neighbourhood": "Familiarity against reworded copies",
}
"""Each detector family in words an audience follows (the technical name stays in the hover)."""
SUMMARY_BASELINE = "Wording alone (no model)"
SUMMARY_ENSEMBLE = "All detectors combined"
BEST_COLOUR = "#1f4e9a"
"""The best detector's bar: a darker blue than the others (never red or green, which mean finding levels)."""


def detector_family(key: str) -> str:
    """The family a method key belongs to (``slope_2gram_mean`` -> ``slope``), longest known prefix first."""
    for family in sorted(PLAIN_FAMILIES, key=len, reverse=True):
        if key == family or key.startswith(f"{family}_"):
            return family
    return key


def family_rows(result: BenchmarkResult) -> list[tuple[str, str, MetricResult, int]]:
    """One row per detector family, best AUROC first: ``(plain name, technical name of its best member, metric,
    members in the family)``; the ensemble and the wording-alone baseline come last."""
    best: dict[str, tuple[str, MetricResult, int]] = {}
    for key in result.method_keys:
        metric = result.metrics.get(key)
        if metric is None:
            continue
        family = detector_family(key)
        label = result.method_labels.get(key, key)
        held = best.get(family)
        size = (held[2] if held else 0) + 1
        if held is None or metric.auroc > held[1].auroc:
            best[family] = (label, metric, size)
        else:
            best[family] = (held[0], held[1], size)
    rows = [(PLAIN_FAMILIES.get(family, label), label, metric, size) for family, (label, metric, size) in best.items()]
    rows.sort(key=lambda row: -row[2].auroc)
    if result.ensemble is not None:
        rows.append((SUMMARY_ENSEMBLE, ENSEMBLE_LABEL, result.ensemble, 1))
    if result.blind_baseline is not None:
        rows.append((SUMMARY_BASELINE, BASELINE_LABEL, result.blind_baseline, 1))
    return rows


def detector_summary(result: BenchmarkResult) -> go.Figure:
    """The membership verdict's chart in plain words: one bar per detector family (a family's variants folded
    into its best), the best first and darkest, then all detectors combined and the wording alone, each with
    its 95% interval; hover names the technical detector and its AUROC."""
    rows = family_rows(result)
    labels = [f"{plain} (best of {size})" if size > 1 else plain for plain, _, _, size in rows]
    colours = [
        BASELINE_COLOUR
        if plain == SUMMARY_BASELINE
        else ENSEMBLE_COLOUR
        if plain == SUMMARY_ENSEMBLE
        else BEST_COLOUR
        if index == 0
        else NEUTRAL_COLOUR
        for index, (plain, _, _, _) in enumerate(rows)
    ]
    bar = go.Bar(
        y=labels,
        x=[m.auroc for _, _, m, _ in rows],
        orientation="h",
        marker_color=colours,
        error_x={
            "type": "data",
            "symmetric": False,
            "array": [m.ci[1] - m.auroc for _, _, m, _ in rows],
            "arrayminus": [m.auroc - m.ci[0] for _, _, m, _ in rows],
            "color": CHANCE_COLOUR,
            "thickness": 1.2,
        },
        customdata=[[plotly_text(name), m.ci[0], m.ci[1]] for _, name, m, _ in rows],
        hovertemplate="%{customdata[0]}<br>AUROC %{x:.3f} (95% CI %{customdata[1]:.3f}–%{customdata[2]:.3f})"
        "<extra></extra>",
        name="",
    )
    figure = go.Figure(bar)
    figure.add_vline(0.5, line={"color": CHANCE_COLOUR, "dash": "dot", "width": 1.5})
    figure.add_annotation(
        x=0.5, y=1.0, yref="paper", yanchor="bottom", text="guessing", showarrow=False, font={"color": CHANCE_COLOUR}
    )
    title = (
        f"{plotly_text(dataset_label(result.dataset))} · {plotly_text(result.model)}: which detector tells them apart"
    )
    style_figure(
        figure,
        height=max(260, 34 * len(rows) + 150),
        title=title,
        showlegend=False,
        xaxis={
            "title": {"text": f"How often a seen text outscores an unseen one ({result.n} texts; 0.5 = guessing)"},
            "range": [0.0, 1.05],
        },
    )
    figure.update_yaxes(autorange="reversed", showgrid=False)
    return figure
