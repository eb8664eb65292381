"""The Inspect page's result, laid out: each passage's verdict and the chart that carries it first, its downloads,
then (out of Present mode) the other placed methods, the per-token curve, the heatmap and every detector's score.

Everything shown is computed in ``core.passage`` (the inspection and its reading in words) and ``core.viz``
(charts, heatmap, CSVs); this module only arranges it.
"""

from __future__ import annotations

import streamlit as st

from core.engine.records import MAX_KGRAM
from core.methods import Method, default_methods
from core.methods.slope import Values
from core.passage.extraction_finding import extraction_sentence
from core.passage.inspection import InspectedPassage
from core.passage.placement import MethodPlacement, PassagePlacement
from core.passage.reading import (
    PENDING_DETAIL,
    PENDING_HEADLINE,
    chart_name,
    comparable,
    data_label,
    passage_verdict,
    placement_of,
    placement_summary,
    reference_scale,
    set_label,
    share_text,
    strip_title,
    verdict_of,
)
from core.passage.result import InspectResult
from core.passage.summary import (
    MIN_SLOPE_TOKENS,
    Calibration,
    calibration_percentiles,
    format_perplexity,
    reportable_scores,
    slope_reportable,
    too_short,
    too_short_text,
)
from core.passage.verdict import PassageVerdict
from core.stats.finding import Finding
from core.viz.extraction_panel import extraction_panel_html
from core.viz.passage_plots import placement_strip
from core.viz.reports.passage import passage_report, scores_csv, token_csv
from core.viz.score_cards import card_description, split_headline
from core.viz.token_curve import confidence_curve, confidence_figure
from core.viz.token_heatmap import token_heatmap_block
from ui.finding import finding_banner
from ui.layout import controls, details
from ui.share import share_link

CALIBRATION = "leaklens_calibration"
"""Session key of the ``Calibration`` (known members / non-members) the scores are placed against."""
KGRAMS_PENDING = "inspect_kgrams_pending"
"""Set while this script run computes the k-gram pass after drawing the fast first view."""


def _slug(name: str) -> str:
    return name.replace(" ", "_")


def _strip(placement: PassagePlacement, method: MethodPlacement, name: str, key: str) -> None:
    """One placed method as a strip: light blue dots for the compared fresh passages, a diamond for the passage."""
    figure = placement_strip(method, name, set_label=set_label(placement), title=strip_title(placement, method))
    # A one-line strip needs no zoom tools, and their bar would sit over its title on narrow screens.
    st.plotly_chart(figure, width="stretch", key=key, config={"displayModeBar": False})


def render_verdicts(result: InspectResult) -> list[Finding]:
    """The verdict first: each passage's banner and the one chart that carries it (same method, same set)."""
    findings = []
    if not result.judged:
        with st.container(key="inspect_verdict_pending"):
            st.info(PENDING_HEADLINE + " " + PENDING_DETAIL, icon=":material/hourglass_top:")
        return [passage_verdict(result, index) for index in range(len(result.passages))]
    for index, passage in enumerate(result.passages):
        placement = placement_of(result, index)
        finding = passage_verdict(result, index)
        findings.append(finding)
        if len(result.passages) > 1:
            st.markdown(f"**{passage.name}**")
        finding_banner(finding)
        if placement is not None and comparable(placement):  # what it was compared with, right under the verdict
            _strip(placement, placement.deciding, chart_name(result, passage), f"placement_{_slug(passage.name)}")
        render_extraction(verdict_of(result, index))
    return findings


def render_extraction(verdict: PassageVerdict | None) -> None:
    """What the model wrote when given the passage's first half, aligned with the passage (or why not)."""
    if verdict is None:
        return
    if verdict.view is not None and verdict.reading is not None:
        st.html(extraction_panel_html(verdict.view, extraction_sentence(verdict.reading, verdict.view)))
    elif verdict.extraction_note:
        st.caption(verdict.extraction_note)


def render_comparison_details(result: InspectResult) -> None:
    """Under the verdict: the other placed methods on the same passages, or the nearest ones for a passage
    that has no comparison of its own (never as the verdict's chart)."""
    for index, passage in enumerate(result.passages):
        placement = placement_of(result, index)
        if placement is None:
            continue
        deciding = placement.deciding
        others = [m for m in placement.methods if m is not deciding]
        prefix = f"{passage.name}: the" if len(result.passages) > 1 else "The"
        name = chart_name(result, passage)
        if not comparable(placement):
            if too_short(placement.n_tokens):
                continue
            st.caption(
                f"{prefix} freshly written passages nearest in length, by {deciding.label}. They are "
                "no yardstick for this passage (see the verdict), so read nothing into where it falls."
            )
            _strip(placement, deciding, name, f"placement_nearest_{_slug(passage.name)}")
            continue
        for method in others:
            st.caption(
                f"{prefix} same {placement.n_similar} passages by {method.label} "
                f"({share_text(method)}). The verdict follows the less extreme of the "
                f"{len(placement.methods)} readings: {deciding.label}."
            )
            _strip(placement, method, name, f"placement_{_slug(passage.name)}_{method.method_key}")


# ---------------------------------------------------------------- the sections under the verdict


def _fmt(value: float) -> str:
    return f"{value:.4g}"


def render_truncation(result: InspectResult) -> None:
    for passage in result.passages:
        if passage.n_dropped:
            kept = passage.analysis.records.n_tokens
            st.warning(
                f"{passage.name} is long: only its first {kept:,} tokens were scored; the last "
                f"{passage.n_dropped_text} tokens were dropped (shown greyed in the heatmap). "
                "Raise the limit under *Options* in Setup to score more."
            )


def render_curve(result: InspectResult) -> None:
    st.subheader("Per-token confidence")
    st.caption(
        "Each dot is one token: how probable the model found it given everything before it. The dashed line "
        "is the least-squares fit; its slope is the *probability slope* score. Hover a dot to see the token. "
        "Read the slope with care: a **rising** line means the model grew more confident as it read, which "
        "fresh text does too (SmolLM2: an invented sentence +0.055, a fresh paragraph +0.025 per token), while "
        "memorised text starts confident and stays flat (Gettysburg +0.0105, *A Tale of Two Cities* −0.002). "
        "The slope alone is no verdict; the comparison with freshly written passages at the top is the reading "
        "to trust."
    )
    with controls("inspect_curve_options"):
        options = st.columns([2, 3, 2])
        values = options[0].radio("Show", ["log-prob", "probability"], horizontal=True, key="inspect_values")
        kgram_label = options[1].select_slider(
            "k-gram normalisation",
            options=["none"] + [str(k) for k in range(1, MAX_KGRAM + 1)],
            key="inspect_kgram",
            disabled=not result.complete,
            help="Subtract each token's log-prob given only the k−1 tokens before it: what remains is how much "
            "the long context helped (1 = the token's probability with no context at all).",
        )
    kgram = 0 if kgram_label == "none" or not result.complete else int(kgram_label)
    kind: Values = "logprob" if values == "log-prob" else "prob"
    curves = [confidence_curve(p.analysis.records, p.name, kind, kgram) for p in result.passages]
    chart, numbers = st.columns([3, 1])
    chart.plotly_chart(confidence_figure(curves), key="inspect_curve", width="stretch")
    with numbers:
        for curve in curves:
            with st.container(border=True, key=f"slope_numbers_{_slug(curve.name)}"):
                if len(curves) > 1:
                    st.markdown(f"**{curve.name}**")
                if not slope_reportable(len(curve.y)):
                    st.caption(
                        f"No slope shown: a line through {len(curve.y)} tokens is noise; a slope needs at "
                        f"least {MIN_SLOPE_TOKENS}."
                    )
                    continue
                st.metric(
                    "Slope b",
                    _fmt(curve.slope),
                    help="Least-squares slope of the curve, per token: rising confidence along the passage.",
                )
                st.metric(
                    "mean − b",
                    _fmt(curve.mean_adjusted),
                    help="The curve's mean minus its slope: the mean-adjusted slope score (the research's "
                    "b − mean, negated so that higher = more likely seen, like every score here).",
                )
                st.metric(
                    "(mean − b) / std",
                    _fmt(curve.z_adjusted),
                    help="The mean-adjusted score divided by the curve's standard deviation (z-adjusted).",
                )


def render_heatmaps(result: InspectResult) -> None:
    st.subheader("Token heatmap")
    st.caption("The passage itself, each token coloured by its probability. Hover a token for details.")
    columns = st.columns(len(result.passages))
    for column, passage in zip(columns, result.passages):
        with column:
            if len(result.passages) > 1:
                st.markdown(f"**{passage.name}**")
            st.html(token_heatmap_block(passage.analysis.records))


def render_scores(result: InspectResult, methods: list[Method], findings: list[Finding]) -> None:
    st.subheader("Scores")
    for note in result.left_out:
        st.caption(note)
    if result.references_note:
        st.warning(result.references_note)
    columns = st.columns(len(result.passages))
    per_row = 3 if len(result.passages) == 1 else 2
    calibration: Calibration | None = st.session_state.get(CALIBRATION)
    for index, (column, passage) in enumerate(zip(columns, result.passages)):
        placement = placement_of(result, index)
        with column:
            if len(result.passages) > 1:
                st.markdown(f"**{passage.name}** · perplexity {format_perplexity(passage.analysis.perplexity)}")
            with st.container(key=f"summary_{_slug(passage.name)}"):
                st.info(placement_summary(result, index))
                if placement is not None and not too_short(passage.analysis.records.n_tokens):
                    st.caption(reference_scale(result, index))
            if calibration is not None:
                _render_percentiles(passage, calibration, methods)
            _score_cards(passage, methods, per_row)
            if not result.complete:
                st.caption(
                    "Computing the k-gram slope scores…"
                    if st.session_state.get(KGRAMS_PENDING)
                    else "The k-gram slope scores were not computed (the run stopped first): press **Analyse** "
                    "in Setup to add them."
                )


def _score_cards(passage: InspectedPassage, methods: list[Method], per_row: int) -> None:
    n_tokens = passage.analysis.records.n_tokens
    scores = reportable_scores(passage.analysis.scores, n_tokens)
    if not scores:
        st.caption(too_short_text(n_tokens))
        return
    if len(scores) < len(passage.analysis.scores):
        st.caption(
            f"Probability-slope scores are left out: a slope needs at least {MIN_SLOPE_TOKENS} tokens "
            f"to mean anything, and this passage has {n_tokens}."
        )
    headline, variants = split_headline([m for m in methods if m.key in scores])
    _card_rows(passage, headline, per_row)
    if variants:
        with st.expander(f"{len(variants)} more probability-slope variants"):
            _card_rows(passage, variants, per_row)


def _card_rows(passage: InspectedPassage, methods: list[Method], per_row: int) -> None:
    scores = passage.analysis.scores
    for start in range(0, len(methods), per_row):
        row = st.columns(per_row)
        for column, method in zip(row, methods[start : start + per_row]):
            with column.container(border=True, key=f"score_card_{_slug(passage.name)}_{method.key}"):
                st.metric(method.label, _fmt(scores[method.key]))
                st.caption(card_description(method))


def _render_percentiles(passage: InspectedPassage, calibration: Calibration, methods: list[Method]) -> None:
    labels = {m.key: m.label for m in methods}
    rows = calibration_percentiles(
        reportable_scores(passage.analysis.scores, passage.analysis.records.n_tokens), calibration
    )
    if not rows:
        return
    name = calibration.name.replace("_", "\\_")  # a file name's underscores must not end the italics
    st.markdown(
        f"**Against the calibration set _{name}_** (higher = more member-like; a separate comparison "
        "you chose in Setup, not the verdict's):"
    )
    st.dataframe(
        [
            {
                "method": labels.get(r.method_key, r.method_key),
                "above % of known members": round(r.above_members, 1),
                "above % of known non-members": round(r.above_non_members, 1),
            }
            for r in rows
        ],
        hide_index=True,
    )


def render_downloads(result: InspectResult, findings: list[Finding]) -> None:
    cols = st.columns(3)
    if len(result.verdicts) == len(result.passages):
        cols[0].download_button(
            "Report (HTML)",
            lambda: passage_report(result.passages, result.verdicts, model=result.model),
            "leaklens_passage_report.html",
            "text/html",
            key="inspect_report",
            on_click="ignore",
            icon=":material/description:",
            help="One self-contained file: the verdict, the charts and the numbers.",
        )
    else:
        cols[0].caption("No report: the passage could not be compared with freshly written passages.")
    cols[1].download_button(
        "Detector scores (CSV)",
        lambda: scores_csv(result, findings),
        "leaklens_scores.csv",
        "text/csv",
        key="inspect_scores_csv",
        on_click="ignore",
        icon=":material/download:",
    )
    cols[2].download_button(
        "Per-token table (CSV)",
        lambda: token_csv(result, findings),
        "leaklens_tokens.csv",
        "text/csv",
        key="inspect_download",
        on_click="ignore",
        icon=":material/download:",
    )


RESULT_CSS = """
<style>
[class*="st-key-slope_numbers_"] [data-testid="stMetricValue"] { font-size: 1.35rem; }
[class*="st-key-score_card_"] [data-testid="stMetricValue"] { font-size: 1.6rem; }
</style>
"""


def render_result(result: InspectResult) -> None:
    """Result first: what was analysed, the verdict and its chart; everything else below, out of Present mode."""
    methods = default_methods()
    st.html(RESULT_CSS)
    st.subheader(f"{data_label(result)} · {result.model}")
    findings = render_verdicts(result)
    if result.judged:
        with controls("inspect_exports"):
            render_downloads(result, findings)
        if result.run_id:
            share_link(result.run_id, "inspect")
    with details("inspect"):
        render_truncation(result)
        render_comparison_details(result)
        render_curve(result)
        render_heatmaps(result)
        render_scores(result, methods, findings)
