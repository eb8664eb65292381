"""Streamlit pieces of the Inspect page: input widgets, result sections, and per-session caching.

Everything computed here comes from ``core`` (analysis, placement among fresh passages, curves, heatmap HTML,
summary, report); this module only arranges it on the page and remembers results so toggles never recompute
the model pass.

One verdict per passage, read one way everywhere: the banner (``placement_finding``), the chart under it and
the text of the scores section all place the passage among the same freshly written passages of similar
length, by the same method (the finding's deciding one). A passage is never compared with itself.
"""

from __future__ import annotations

import csv
import io
import math
from collections import OrderedDict
from dataclasses import dataclass, replace

import numpy as np
import streamlit as st

from core.data.examples import FRESH, GETTYSBURG, GETTYSBURG_PARAPHRASE, Example
from core.engine.records import scored_text
from core.engine.scoring import MAX_KGRAM
from core.engine.setup import resolve_setup
from core.errors import LeakLensError
from core.membership.calibration import (
    calibration_from_run,
    calibration_label,
    calibration_runs,
    stored_fresh_calibration,
)
from core.membership.extraction_finding import extraction_sentence
from core.membership.inspection import (
    DEFAULT_MAX_TOKENS,
    InspectedPassage,
    decode_text_upload,
    inspect_passages,
    reference_points,
)
from core.membership.passage_finding import MethodPlacement, PassagePlacement, fresh_positions_for, has_yardstick
from core.membership.passage_verdict import PassageVerdict, judge_passages
from core.membership.summary import (
    MIN_SLOPE_TOKENS,
    Calibration,
    ReferencePoint,
    calibration_percentiles,
    format_perplexity,
    honest_summary,
    reportable_scores,
    slope_reportable,
    too_short,
    too_short_text,
)
from core.membership.text_form import guess_group
from core.methods import Method, default_methods
from core.methods.slope import Values
from core.methods.support import supported_methods
from core.stats.finding import Finding
from core.store.results import ResultStore
from core.viz.calibration_plot import placement_strip
from core.viz.csv_export import result_csv
from core.viz.extraction_panel import extraction_panel_html
from core.viz.report import passage_report
from core.viz.score_cards import card_description, split_headline
from core.viz.token_curve import confidence_curve, confidence_figure
from core.viz.token_heatmap import token_heatmap_block
from core.viz.token_table import token_table_csv
from ui.common import _cached_model, current_model_spec, current_start_token, get_model, streamlit_progress
from ui.finding import finding_banner
from ui.freshness import Input, setting, typed_text
from ui.layout import controls, details

TEXT_A = "inspect_text_a"
TEXT_B = "inspect_text_b"
COMPARE = "inspect_compare"
UPLOAD = "inspect_upload"
UPLOAD_ERROR = "inspect_upload_error"
RESULT = "inspect_result"
CACHE = "inspect_cache"
KGRAMS_PENDING = "inspect_kgrams_pending"
"""Set while this script run computes the k-gram pass after drawing the fast first view."""
KGRAMS_TODO = "inspect_kgrams_todo"
"""Set for the next script run: draw the verdict just computed, then add the k-gram pass."""
CALIBRATION = "leaklens_calibration"
"""Session key of the ``Calibration`` (known members / non-members) the scores are placed against."""
CALIBRATION_RUN = "inspect_calibration_run"
CALIBRATION_ERROR = "inspect_calibration_error"
CACHE_SIZE = 12
PENDING_HEADLINE = "Comparing with freshly written passages of similar length…"
PENDING_DETAIL = (
    "The verdict appears here as soon as the passages it is compared with are scored; the passage's own "
    "curve, colours and scores are below already."
)
EXAMPLE_LABELS = {
    GETTYSBURG.key: "the Gettysburg Address (example)",
    FRESH.key: "a freshly written paragraph (example)",
    GETTYSBURG_PARAPHRASE.key: "a paraphrase of the Gettysburg Address (example)",
}
"""How the subheader names a built-in example (the data's label; a pasted passage is "your passage")."""


@dataclass(frozen=True)
class InspectResult:
    model: str
    passages: tuple[InspectedPassage, ...]
    complete: bool
    """False for the fast first view: no k-gram columns and no k-gram scores yet."""
    placements: tuple[PassagePlacement | None, ...] = ()
    """Each passage among the freshly written calibration passages of similar length (empty when unavailable)."""
    texts: tuple[str, ...] = ()
    """The passages as analysed (to name them and to keep a passage from being compared with itself)."""
    placement_error: str = ""
    """Why the passages could not be placed among the fresh passages, when they could not."""
    verdicts: tuple[PassageVerdict, ...] = ()
    """Each passage's placement, continuation and one finding (empty when the fresh passages were unavailable)."""
    judged: bool = True
    """False while the passage's own result is shown and its comparison with fresh passages is still to come."""
    asked: tuple[tuple[str, str], ...] = ()
    """The (name, text) pairs it was asked for; with ``max_tokens``, this session's cache key."""
    max_tokens: int = DEFAULT_MAX_TOKENS


# ---------------------------------------------------------------- input


def _fill(key: str, example: Example) -> None:
    st.session_state[key] = example.text


def _load_upload() -> None:
    uploaded = st.session_state.get(UPLOAD)
    st.session_state.pop(UPLOAD_ERROR, None)
    if uploaded is None:
        return
    try:
        st.session_state[TEXT_A] = decode_text_upload(uploaded.getvalue(), uploaded.name)
    except LeakLensError as exc:
        st.session_state[UPLOAD_ERROR] = str(exc)


def passage_inputs() -> list[tuple[str, str]]:
    """Draw the inputs; return the ``(name, text)`` pairs to analyse (one, or two when comparing)."""
    st.session_state.setdefault(TEXT_A, "")
    st.session_state.setdefault(TEXT_B, "")
    compare = st.toggle("Compare with a second passage (e.g. the original vs a paraphrase)", key=COMPARE)
    columns = st.columns(2) if compare else [st.container()]
    with columns[0]:
        buttons = st.columns(2)
        famous, fresh = (
            ("Gettysburg (famous)", "Fresh (unseen)")
            if compare
            else ("Example: Gettysburg Address (famous)", "Example: fresh paragraph (unseen)")
        )
        buttons[0].button(
            famous,
            key="inspect_example_famous",
            on_click=_fill,
            args=(TEXT_A, GETTYSBURG),
            help=GETTYSBURG.why,
            width="stretch",
        )
        buttons[1].button(
            fresh, key="inspect_example_fresh", on_click=_fill, args=(TEXT_A, FRESH), help=FRESH.why, width="stretch"
        )
        st.text_area(
            "Passage A" if compare else "Passage",
            key=TEXT_A,
            height=170,
            placeholder="Paste a passage here, or pick an example above, or upload a .txt file below.",
        )
        st.file_uploader("…or upload a .txt file (UTF-8)", type=["txt"], key=UPLOAD, on_change=_load_upload)
        if st.session_state.get(UPLOAD_ERROR):
            st.error(st.session_state[UPLOAD_ERROR])
    if not compare:
        return [("Passage", st.session_state[TEXT_A])]
    with columns[1]:
        st.button(
            "Paraphrase of the Gettysburg opening",
            key="inspect_example_paraphrase",
            on_click=_fill,
            args=(TEXT_B, GETTYSBURG_PARAPHRASE),
            help=GETTYSBURG_PARAPHRASE.why,
            width="stretch",
        )
        st.text_area("Passage B", key=TEXT_B, height=170, placeholder="The passage to compare with passage A.")
    return [("Passage A", st.session_state[TEXT_A]), ("Passage B", st.session_state[TEXT_B])]


def current_inputs(passages: list[tuple[str, str]], max_tokens: int) -> list[Input]:
    """Everything a shown result depends on: a result computed for other inputs is marked out of date.

    The passages keep their labels whether or not the comparison is on, so switching it on reads as
    "a second passage was added" rather than as a new first passage.
    """
    texts = [typed_text("passage", passages[0][1])]
    texts += [typed_text("second passage", text) for _, text in passages[1:]]
    return [
        setting("model", current_model_spec()),
        setting("start token", current_start_token() or "automatic"),
        *texts,
        setting("token limit", max_tokens),
    ]


# ---------------------------------------------------------------- computation


def analyse(
    spec: str, passages: list[tuple[str, str]], max_tokens: int, *, complete: bool, judge: bool = True
) -> InspectResult | None:
    """Analyse (or fetch from this session's cache); shows a friendly message instead of raising.

    complete=False is the fast first view (main pass only); complete=True adds the k-gram pass. judge=False
    returns the passage's own result at once, before any fresh passage is scored (``judge_result`` adds the
    verdicts); a cached result is returned whole either way.
    """
    empty = [name for name, text in passages if not text.strip()]
    if empty:
        st.info(
            f"{' and '.join(empty)} {'is' if len(empty) == 1 else 'are'} empty. Paste some text, pick an "
            "example or upload a .txt file in Setup, then press **Analyse**."
        )
        return None
    cached = cached_result(spec, passages, max_tokens, complete=complete)  # keyed by the start token too
    if cached is not None:
        return cached
    try:
        lm = get_model(spec)
        label = "Scoring the passage" + ("s" if len(passages) > 1 else "")
        progress = streamlit_progress(label if not complete else label + " with k-gram contexts")
        found = inspect_passages(lm, passages, max_tokens=max_tokens, with_kgrams=complete, progress=progress)
    except LeakLensError as exc:
        st.error(str(exc))
        return None
    cache: OrderedDict = st.session_state.setdefault(CACHE, OrderedDict())
    # The k-gram pass leaves loss and Min-K% as the fast view had them: its placement serves both views.
    fast = cache.get((spec, current_start_token(), tuple(passages), max_tokens, False)) if complete else None
    texts = tuple(text for _, text in passages)
    result = InspectResult(
        spec, tuple(found), complete, (), texts, judged=False, asked=tuple(passages), max_tokens=max_tokens
    )
    if fast is not None:
        result = replace(
            result,
            placements=fast.placements,
            placement_error=fast.placement_error,
            verdicts=fast.verdicts,
            judged=True,
        )
    elif judge:
        result = judge_result(result)
    if result.judged:
        _remember(result)
    return result


def judge_result(result: InspectResult) -> InspectResult:
    """The result with each passage's verdict: the fresh passages it is compared with are scored first
    (nearest in length first; only those, for a model whose scores are neither shipped nor stored)."""
    verdicts, error = _verdicts(get_model(result.model), list(result.passages))
    placements = tuple(v.placement for v in verdicts)
    judged = replace(result, placements=placements, placement_error=error, verdicts=verdicts, judged=True)
    _remember(judged)
    return judged


def _remember(result: InspectResult) -> None:
    cache: OrderedDict = st.session_state.setdefault(CACHE, OrderedDict())
    cache[(result.model, current_start_token(), result.asked, result.max_tokens, result.complete)] = result
    while len(cache) > CACHE_SIZE:
        cache.popitem(last=False)


def _verdicts(lm, found) -> tuple[tuple[PassageVerdict, ...], str]:
    """Each passage among the fresh calibration passages of its length (shipped, stored, or scored now and
    kept in the store), and its first half continued by the model."""
    wanted = [(p.analysis.records.n_tokens, guess_group(scored_text(p.analysis.records))) for p in found]
    try:
        calibration = stored_fresh_calibration(
            lm.spec,
            get_model=lambda: lm,
            store=ResultStore(),
            setup=resolve_setup(),
            start_token=current_start_token(),
            progress=streamlit_progress(
                "Comparing with freshly written passages of similar length: scoring them once for this model"
            ),
            only=lambda rows: fresh_positions_for(lm, rows, wanted),
        )
        progress = streamlit_progress("Giving the model each passage's first half")
        passages = [(p.analysis.scores, p.analysis.records) for p in found]
        return tuple(judge_passages(lm, passages, calibration, progress=progress)), ""
    except LeakLensError as exc:
        return (), str(exc)


def cached_result(
    spec: str, passages: list[tuple[str, str]], max_tokens: int, *, complete: bool
) -> InspectResult | None:
    """This session's earlier result for the same inputs; a complete one also serves a fast request."""
    cache: OrderedDict = st.session_state.setdefault(CACHE, OrderedDict())
    for wanted in (True,) if complete else (True, False):
        key = (spec, current_start_token(), tuple(passages), max_tokens, wanted)
        if key in cache:
            cache.move_to_end(key)
            return cache[key]
    return None


@st.cache_data(show_spinner="Scoring the two built-in reference examples once for this model…", max_entries=8)
def cached_reference_points(spec: str, start_token: str | None = None) -> list[ReferencePoint]:
    return reference_points(_cached_model(spec, start_token))


# ---------------------------------------------------------------- the verdict


def _same_text(a: str, b: str) -> bool:
    return " ".join(a.split()) == " ".join(b.split())


def _slug(name: str) -> str:
    return name.replace(" ", "_")


def placement_of(result: InspectResult, index: int) -> PassagePlacement | None:
    return result.placements[index] if index < len(result.placements) else None


def verdict_of(result: InspectResult, index: int) -> PassageVerdict | None:
    return result.verdicts[index] if index < len(result.verdicts) else None


def passage_verdict(result: InspectResult, index: int) -> Finding:
    """The passage's one verdict: its place among the fresh passages and its continuation, or why there is none."""
    verdict = verdict_of(result, index)
    if verdict is not None:
        return verdict.finding
    if not result.judged:
        return Finding(
            "inconclusive",
            PENDING_HEADLINE,
            ("the comparison with freshly written passages of similar length is under way",),
        )
    reason = result.placement_error or "the freshly written passages could not be scored for this model."
    return Finding(
        "inconclusive",
        "Cannot tell: the passage could not be compared with freshly written passages, and a single score has "
        "no threshold of its own.",
        (reason,),
        (
            "Without text the model cannot have seen, scored the same way, there is nothing to place the passage "
            "against.",
        ),
    )


def comparable(placement: PassagePlacement | None) -> bool:
    """True when the comparison carries a reading (enough fresh passages of similar length, enough tokens)."""
    return placement is not None and has_yardstick(placement)


def _set_label(placement: PassagePlacement, finding: Finding) -> str:
    """The comparison set as the verdict names it: passages of similar length, or only the nearest in length."""
    low, high = placement.token_range
    lengths = f"{low} tokens" if low == high else f"{low}–{high} tokens"
    if comparable(placement):
        return f"freshly written passages of {lengths}"
    return f"freshly written passages nearest in length ({lengths})"


def _strip(placement: PassagePlacement, method: MethodPlacement, finding: Finding, name: str, key: str) -> None:
    """One placed method as a strip: light blue dots for the compared fresh passages, a diamond for the passage."""
    title = f"Dots: {method.n_compared} {_set_label(placement, finding)} · further right = more predictable"
    st.plotly_chart(
        placement_strip(method, name, set_label=_set_label(placement, finding), title=title), width="stretch", key=key
    )


def passage_label(result: InspectResult, index: int) -> str:
    """One passage as a reader knows it: a built-in example by name, anything else as "your passage"."""
    text = result.texts[index] if index < len(result.texts) else ""
    example = next((e for e in (GETTYSBURG, FRESH, GETTYSBURG_PARAPHRASE) if text and _same_text(e.text, text)), None)
    return EXAMPLE_LABELS[example.key] if example is not None else "your passage"


def data_label(result: InspectResult) -> str:
    """The passages as a reader knows them: a built-in example by name, anything else as "your passage"."""
    names = []
    for index, passage in enumerate(result.passages):
        label = passage_label(result, index)
        names.append(label if len(result.passages) == 1 else f"{passage.name}: {label}")
    joined = " vs ".join(names)
    return joined[0].upper() + joined[1:]


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
        render_extraction(verdict_of(result, index))
        if placement is not None and comparable(placement):
            _strip(
                placement, placement.deciding, finding, _chart_name(result, passage), f"placement_{_slug(passage.name)}"
            )
    return findings


def render_extraction(verdict: PassageVerdict | None) -> None:
    """What the model wrote when given the passage's first half, aligned with the passage (or why not)."""
    if verdict is None:
        return
    if verdict.view is not None and verdict.reading is not None:
        st.html(extraction_panel_html(verdict.view, extraction_sentence(verdict.reading, verdict.view)))
    elif verdict.extraction_note:
        st.caption(verdict.extraction_note)


def _chart_name(result: InspectResult, passage: InspectedPassage) -> str:
    return passage.name if len(result.passages) > 1 else "this passage"


def render_comparison_details(result: InspectResult, findings: list[Finding]) -> None:
    """Under the verdict: the other placed methods on the same passages, or the nearest ones for a passage
    that has no comparison of its own (never as the verdict's chart)."""
    for index, passage in enumerate(result.passages):
        placement = placement_of(result, index)
        if placement is None:
            continue
        finding = findings[index]
        deciding = placement.deciding
        others = [m for m in placement.methods if m is not deciding]
        prefix = f"{passage.name}: the" if len(result.passages) > 1 else "The"
        name = _chart_name(result, passage)
        if not comparable(placement):
            if too_short(placement.n_tokens):
                continue
            st.caption(
                f"{prefix} freshly written passages nearest in length, by {deciding.label}. They are "
                "no yardstick for this passage (see the verdict), so read nothing into where it falls."
            )
            _strip(placement, deciding, finding, name, f"placement_nearest_{_slug(passage.name)}")
            continue
        for method in others:
            st.caption(
                f"{prefix} same {placement.n_similar} passages by {method.label} "
                f"({_share_text(method)}). The verdict follows the less extreme of the "
                f"{len(placement.methods)} readings: {deciding.label}."
            )
            _strip(placement, method, finding, name, f"placement_{_slug(passage.name)}_{method.method_key}")


def _share_text(method: MethodPlacement) -> str:
    """'more predictable than all 36' / 'than 91% of 36' / 'less predictable than all 40', never overstated."""
    if method.percentile == 0:
        return f"less predictable than all {method.n_compared}"
    if method.n_at_least == 0:
        return f"more predictable than all {method.n_compared}"
    return f"more predictable than {math.floor(method.percentile)}% of {method.n_compared}"


def _method_line(method: MethodPlacement) -> str:
    median = float(np.median(method.calibration_scores))
    if method.method_key == "loss":  # the score is the mean log-prob: perplexity reads better
        return (
            f"- perplexity **{format_perplexity(math.exp(-method.score))}** against their median "
            f"{format_perplexity(math.exp(-median))} (lower = more predictable): {_share_text(method)}"
        )
    return (
        f"- {method.label} **{method.score:.2f}** against their median {median:.2f} (higher = more "
        f"predictable): {_share_text(method)}"
    )


def placement_summary(
    passage: InspectedPassage,
    placement: PassagePlacement | None,
    finding: Finding,
    references: list[ReferencePoint],
    model: str,
    text: str,
) -> str:
    """The scores section's reading, in the verdict's terms: the same fresh passages, the deciding method first.

    Without a placement there is no verdict, and the reading says so (``honest_summary``).
    """
    n_tokens = passage.analysis.records.n_tokens
    perplexity = passage.analysis.perplexity
    if placement is None or too_short(n_tokens):
        return honest_summary(perplexity, references, model, text=text, n_tokens=n_tokens)
    low, high = placement.token_range
    if not comparable(placement):
        return (
            f"**No freshly written passages of this length to compare with**, so no reading (see the verdict "
            f"above). This passage has {n_tokens} tokens and perplexity {format_perplexity(perplexity)} under "
            f"`{model}`; the nearest fresh passages are {low}–{high} tokens long."
        )
    deciding = placement.deciding
    methods = [deciding, *(m for m in placement.methods if m is not deciding)]
    lines = [
        f"**The verdict's comparison:** this passage ({n_tokens} tokens) against the {placement.n_similar} "
        f"freshly written passages of similar length ({low}–{high} tokens), scored by `{model}`. The verdict "
        f"reads {deciding.label}, the less extreme of:",
        *(_method_line(m) for m in methods),
    ]
    return "\n".join(lines)


def reference_scale(perplexity: float, references: list[ReferencePoint], text: str) -> str:
    """One line for scale (not part of the verdict): the built-in examples' perplexities, never the passage's own."""
    others = [r for r in references if not _same_text(r.reference_text, text)]
    itself = [r for r in references if r not in others]
    parts = [f"the {r.label} {format_perplexity(r.perplexity)}" for r in others]
    line = f"For scale only, not part of the verdict: perplexity {format_perplexity(perplexity)} here"
    if parts:
        line += "; " + "; ".join(parts)
    if itself:
        line += f" (this passage is the {itself[0].label}, so it is not set beside itself)"
    return line + "."


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
    for note in supported_methods(result.model, methods)[1]:
        st.caption(note)
    try:
        references = cached_reference_points(result.model, current_start_token())
    except LeakLensError as exc:
        references = []
        st.warning(f"Reference examples could not be scored: {exc}")
    columns = st.columns(len(result.passages))
    per_row = 3 if len(result.passages) == 1 else 2
    calibration: Calibration | None = st.session_state.get(CALIBRATION)
    for index, (column, passage) in enumerate(zip(columns, result.passages)):
        text = result.texts[index] if index < len(result.texts) else ""
        placement = placement_of(result, index)
        with column:
            if len(result.passages) > 1:
                st.markdown(f"**{passage.name}** · perplexity {format_perplexity(passage.analysis.perplexity)}")
            with st.container(key=f"summary_{_slug(passage.name)}"):
                st.info(placement_summary(passage, placement, findings[index], references, result.model, text))
                if placement is not None and not too_short(passage.analysis.records.n_tokens):
                    st.caption(reference_scale(passage.analysis.perplexity, references, text))
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


# ---------------------------------------------------------------- exports


def token_csv(result: InspectResult, findings: list[Finding]) -> str:
    """One row per scored token, each starting with its passage's verdict, the model and the passage.

    The token table's own writer neutralises cells a spreadsheet would run as formulas (passages are
    untrusted); its rows are read back and given the verdict columns.
    """
    parts: list[str] = []
    tables = [
        list(csv.DictReader(io.StringIO(token_table_csv([(p.name, p.analysis.records)])))) for p in result.passages
    ]
    columns: list[str] = []
    for rows in tables:
        for row in rows[:1]:
            columns += [c for c in row if c not in columns]
    for index, (finding, rows) in enumerate(zip(findings, tables, strict=True)):
        data = passage_label(result, index)
        text = result_csv(rows, finding=finding, model=result.model, data=data, columns=columns)
        parts.append(text if not parts else text.split("\n", 1)[1])
    return "".join(parts)


def scores_csv(result: InspectResult, findings: list[Finding]) -> str:
    """One row per passage and detector: the score and, for the placed methods, its place among fresh passages."""
    labels = {m.key: m.label for m in default_methods()}
    parts: list[str] = []
    columns = [
        "passage",
        "n_tokens",
        "perplexity",
        "method",
        "method_label",
        "score",
        "percentile_vs_fresh",
        "fresh_scoring_at_least_as_high",
        "fresh_compared",
        "chance_if_fresh",
    ]
    for index, (passage, finding) in enumerate(zip(result.passages, findings, strict=True)):
        placement = placement_of(result, index)
        rows = []
        for key, value in reportable_scores(passage.analysis.scores, passage.analysis.records.n_tokens).items():
            placed = placement.method(key) if placement is not None else None
            rows.append(
                {
                    "passage": passage.name,
                    "n_tokens": passage.analysis.records.n_tokens,
                    "perplexity": passage.analysis.perplexity,
                    "method": key,
                    "method_label": labels.get(key, key),
                    "score": value,
                    "percentile_vs_fresh": placed.percentile if placed else None,
                    "fresh_scoring_at_least_as_high": placed.n_at_least if placed else None,
                    "fresh_compared": placed.n_compared if placed else None,
                    "chance_if_fresh": placed.chance if placed else None,
                }
            )
        data = passage_label(result, index)
        text = result_csv(rows, finding=finding, model=result.model, data=data, columns=columns)
        parts.append(text if not parts else text.split("\n", 1)[1])
    return "".join(parts)


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
        scores_csv(result, findings),
        "leaklens_scores.csv",
        "text/csv",
        key="inspect_scores_csv",
        on_click="ignore",
        icon=":material/download:",
    )
    cols[2].download_button(
        "Per-token table (CSV)",
        token_csv(result, findings),
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
    with details("inspect"):
        render_truncation(result)
        render_comparison_details(result, findings)
        render_curve(result)
        render_heatmaps(result)
        render_scores(result, methods, findings)


def _use_calibration_run() -> None:
    """Build the chosen run's calibration once, when the choice changes (not on every rerun)."""
    run_id = st.session_state.get(CALIBRATION_RUN)
    st.session_state.pop(CALIBRATION_ERROR, None)
    st.session_state.pop(CALIBRATION, None)
    if run_id is None:
        return
    try:
        store = ResultStore()
        run = store.get_run(run_id)
        if run is None:
            raise LeakLensError(f"Run {run_id} is no longer in the results store.")
        st.session_state[CALIBRATION] = calibration_from_run(store, run)
    except LeakLensError as exc:
        st.session_state[CALIBRATION_ERROR] = str(exc)


def calibration_option(spec: str) -> None:
    """Pick a finished membership benchmark run as the calibration set; runs of ``spec`` are listed first."""
    with st.expander("Calibration set"):
        try:
            runs = calibration_runs(ResultStore(), spec)
        except LeakLensError as exc:
            st.error(str(exc))
            return
        labels = {r.run_id: calibration_label(r) + ("" if r.model == spec else " — another model") for r in runs}
        st.selectbox(
            "Place the scores among the known members and non-members of a finished membership benchmark run",
            [None, *labels],
            format_func=lambda k: "None" if k is None else labels[k],
            key=CALIBRATION_RUN,
            on_change=_use_calibration_run,
            help="Scores are only comparable under the same model and methods: prefer a run of this model.",
        )
        if not runs:
            st.caption(
                "No finished membership benchmark run in the results store yet: run one on the Membership "
                "benchmark page to calibrate with it."
            )
        if st.session_state.get(CALIBRATION_ERROR):
            st.error(st.session_state[CALIBRATION_ERROR])


def max_tokens_option() -> int:
    with st.expander("Options"):
        return int(
            st.number_input(
                "Score at most this many tokens per passage",
                min_value=16,
                max_value=8192,
                value=DEFAULT_MAX_TOKENS,
                step=128,
                key="inspect_max_tokens",
                help="Longer passages are cut (with a warning); the model's context length is always a limit too.",
            )
        )
