"""Streamlit pieces of the Inspect page: input widgets, result sections, and per-session caching.

Everything computed here comes from ``core`` (analysis, curves, heatmap HTML, summary); this module only
arranges it on the page and remembers results so toggles never recompute the model pass.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import streamlit as st

from core.data.examples import FRESH, GETTYSBURG, GETTYSBURG_PARAPHRASE, Example
from core.engine.scoring import MAX_KGRAM
from core.engine.setup import resolve_setup
from core.errors import LeakLensError
from core.membership.calibration import (
    calibration_from_run,
    calibration_label,
    calibration_runs,
    stored_fresh_calibration,
)
from core.membership.inspection import (
    DEFAULT_MAX_TOKENS,
    InspectedPassage,
    decode_text_upload,
    inspect_passages,
    reference_points,
)
from core.membership.passage_finding import PassagePlacement, place_passage, placement_finding
from core.membership.summary import (
    Calibration,
    ReferencePoint,
    calibration_percentiles,
    format_perplexity,
    honest_summary,
)
from core.methods import Method, default_methods
from core.store.results import ResultStore
from core.viz.calibration_plot import placement_strip
from core.viz.score_cards import card_description, split_headline
from core.viz.token_curve import confidence_curve, confidence_figure
from core.viz.token_heatmap import token_heatmap_block
from core.viz.token_table import token_table_csv
from ui.common import _cached_model, current_model_spec, current_start_token, get_model, streamlit_progress
from ui.finding import finding_banner
from ui.freshness import Input, setting, typed_text

TEXT_A = "inspect_text_a"
TEXT_B = "inspect_text_b"
COMPARE = "inspect_compare"
UPLOAD = "inspect_upload"
UPLOAD_ERROR = "inspect_upload_error"
RESULT = "inspect_result"
CACHE = "inspect_cache"
CALIBRATION = "leaklens_calibration"
"""Session key of the ``Calibration`` (known members / non-members) the scores are placed against."""
CALIBRATION_RUN = "inspect_calibration_run"
CALIBRATION_ERROR = "inspect_calibration_error"
CACHE_SIZE = 12


@dataclass(frozen=True)
class InspectResult:
    model: str
    passages: tuple[InspectedPassage, ...]
    complete: bool
    """False for the fast first view: no k-gram columns and no k-gram scores yet."""
    placements: tuple[PassagePlacement | None, ...] = ()
    """Each passage among the freshly written calibration passages of similar length (empty when unavailable)."""


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
    compare = st.toggle(
        "Compare with a second passage (e.g. the original vs a paraphrase)", key=COMPARE
    )
    columns = st.columns(2) if compare else [st.container()]
    with columns[0]:
        buttons = st.columns(2)
        famous, fresh = ("Gettysburg (famous)", "Fresh (unseen)") if compare else (
            "Example: Gettysburg Address (famous)", "Example: fresh paragraph (unseen)")
        buttons[0].button(famous, key="inspect_example_famous",
                          on_click=_fill, args=(TEXT_A, GETTYSBURG), help=GETTYSBURG.why, width="stretch")
        buttons[1].button(fresh, key="inspect_example_fresh",
                          on_click=_fill, args=(TEXT_A, FRESH), help=FRESH.why, width="stretch")
        st.text_area("Passage A" if compare else "Passage", key=TEXT_A, height=170,
                     placeholder="Paste a passage here, or pick an example above, or upload a .txt file below.")
        st.file_uploader("…or upload a .txt file (UTF-8)", type=["txt"], key=UPLOAD, on_change=_load_upload)
        if st.session_state.get(UPLOAD_ERROR):
            st.error(st.session_state[UPLOAD_ERROR])
    if not compare:
        return [("Passage", st.session_state[TEXT_A])]
    with columns[1]:
        st.button("Paraphrase of the Gettysburg opening", key="inspect_example_paraphrase",
                  on_click=_fill, args=(TEXT_B, GETTYSBURG_PARAPHRASE), help=GETTYSBURG_PARAPHRASE.why,
                  width="stretch")
        st.text_area("Passage B", key=TEXT_B, height=170, placeholder="The passage to compare with passage A.")
    return [("Passage A", st.session_state[TEXT_A]), ("Passage B", st.session_state[TEXT_B])]


def current_inputs(passages: list[tuple[str, str]], max_tokens: int) -> list[Input]:
    """Everything a shown result depends on: a result computed for other inputs is marked out of date.

    The passages keep their labels whether or not the comparison is on, so switching it on reads as
    "a second passage was added" rather than as a new first passage.
    """
    texts = [typed_text("passage", passages[0][1])]
    texts += [typed_text("second passage", text) for _, text in passages[1:]]
    return [setting("model", current_model_spec()), setting("start token", current_start_token() or "automatic"),
            *texts, setting("token limit", max_tokens)]


# ---------------------------------------------------------------- computation

def analyse(spec: str, passages: list[tuple[str, str]], max_tokens: int, *, complete: bool) -> InspectResult | None:
    """Analyse (or fetch from this session's cache); shows a friendly message instead of raising.

    complete=False is the fast first view (main pass only); complete=True adds the k-gram pass.
    """
    empty = [name for name, text in passages if not text.strip()]
    if empty:
        st.info(f"{' and '.join(empty)} {'is' if len(empty) == 1 else 'are'} empty. Paste some text, pick an "
                "example or upload a .txt file, then press **Analyse**.")
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
    placements = fast.placements if fast is not None else _placements(lm, found)
    result = InspectResult(spec, tuple(found), complete, placements)
    cache[(spec, current_start_token(), tuple(passages), max_tokens, complete)] = result
    while len(cache) > CACHE_SIZE:
        cache.popitem(last=False)
    return result


def _placements(lm, found) -> tuple[PassagePlacement | None, ...]:
    """Place every passage among the fresh calibration passages, scored once per model and kept in the store."""
    try:
        calibration = stored_fresh_calibration(
            lm.spec, get_model=lambda: lm, store=ResultStore(), setup=resolve_setup(),
            start_token=current_start_token(),
            progress=streamlit_progress("Scoring LeakLens's freshly written passages once for this model"),
        )
        return tuple(place_passage(p.analysis.scores, p.analysis.records.n_tokens, calibration) for p in found)
    except LeakLensError as exc:
        st.caption(f"No comparison with freshly written passages: {exc}")
        return ()


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


# ---------------------------------------------------------------- results

def _fmt(value: float) -> str:
    return f"{value:.4g}"


def render_truncation(result: InspectResult) -> None:
    for passage in result.passages:
        if passage.n_dropped:
            kept = passage.analysis.records.n_tokens
            st.warning(
                f"{passage.name} is long: only its first {kept:,} tokens were scored; the last "
                f"{passage.n_dropped_text} tokens were dropped (shown greyed in the heatmap). "
                "Raise the limit under *Options* to score more."
            )


def render_curve(result: InspectResult) -> None:
    st.subheader("Per-token confidence")
    st.caption(
        "Each dot is one token: how probable the model found it given everything before it. The dashed line "
        "is the least-squares fit; its slope is the *probability slope* score. Hover a dot to see the token. "
        "Read the slope with care: a **rising** line means the model grew more confident as it read, which "
        "fresh text does too (SmolLM2: an invented sentence +0.055, a fresh paragraph +0.025 per token), while "
        "memorised text starts confident and stays flat (Gettysburg +0.0105, *A Tale of Two Cities* −0.002). "
        "The slope alone is no verdict; the comparison with freshly written passages above is the reading to "
        "trust."
    )
    controls = st.columns([2, 3, 2])
    values = controls[0].radio("Show", ["log-prob", "probability"], horizontal=True, key="inspect_values")
    kgram_label = controls[1].select_slider(
        "k-gram normalisation", options=["none"] + [str(k) for k in range(1, MAX_KGRAM + 1)],
        key="inspect_kgram", disabled=not result.complete,
        help="Subtract each token's log-prob given only the k−1 tokens before it: what remains is how much "
             "the long context helped (1 = the token's probability with no context at all).",
    )
    kgram = 0 if kgram_label == "none" or not result.complete else int(kgram_label)
    kind = "logprob" if values == "log-prob" else "prob"
    curves = [confidence_curve(p.analysis.records, p.name, kind, kgram) for p in result.passages]
    chart, numbers = st.columns([3, 1])
    chart.plotly_chart(confidence_figure(curves), key="inspect_curve", width="stretch")
    with numbers:
        for curve in curves:
            with st.container(border=True, key=f"slope_numbers_{curve.name.replace(' ', '_')}"):
                if len(curves) > 1:
                    st.markdown(f"**{curve.name}**")
                st.metric("Slope b", _fmt(curve.slope),
                          help="Least-squares slope of the curve, per token: rising confidence along the passage.")
                st.metric("mean − b", _fmt(curve.mean_adjusted),
                          help="The curve's mean minus its slope: the mean-adjusted slope score (the research's "
                               "b − mean, negated so that higher = more likely seen, like every score here).")
                st.metric("(mean − b) / std", _fmt(curve.z_adjusted),
                          help="The mean-adjusted score divided by the curve's standard deviation (z-adjusted).")


def render_heatmaps(result: InspectResult) -> None:
    st.subheader("Token heatmap")
    st.caption("The passage itself, each token coloured by its probability. Hover a token for details.")
    columns = st.columns(len(result.passages))
    for column, passage in zip(columns, result.passages):
        with column:
            if len(result.passages) > 1:
                st.markdown(f"**{passage.name}**")
            st.html(token_heatmap_block(passage.analysis.records))


def render_scores(result: InspectResult, methods: list[Method]) -> None:
    st.subheader("Scores")
    try:
        references = cached_reference_points(result.model, current_start_token())
    except LeakLensError as exc:
        references = []
        st.warning(f"Reference examples could not be scored: {exc}")
    columns = st.columns(len(result.passages))
    per_row = 3 if len(result.passages) == 1 else 2
    calibration: Calibration | None = st.session_state.get(CALIBRATION)
    for column, passage in zip(columns, result.passages):
        with column:
            if len(result.passages) > 1:
                st.markdown(f"**{passage.name}** · perplexity {format_perplexity(passage.analysis.perplexity)}")
            with st.container(key=f"summary_{passage.name.replace(' ', '_')}"):
                st.info(honest_summary(passage.analysis.perplexity, references, result.model))
            if calibration is not None:
                _render_percentiles(passage, calibration, methods)
            _score_cards(passage, methods, per_row)
            if not result.complete:
                st.caption("Computing the k-gram slope scores…")


def _score_cards(passage: InspectedPassage, methods: list[Method], per_row: int) -> None:
    scores = passage.analysis.scores
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
            with column.container(border=True, key=f"score_card_{passage.name.replace(' ', '_')}_{method.key}"):
                st.metric(method.label, _fmt(scores[method.key]))
                st.caption(card_description(method))


def _render_percentiles(passage: InspectedPassage, calibration: Calibration, methods: list[Method]) -> None:
    labels = {m.key: m.label for m in methods}
    rows = calibration_percentiles(passage.analysis.scores, calibration)
    if not rows:
        return
    name = calibration.name.replace("_", "\\_")  # a file name's underscores must not end the italics
    st.markdown(f"**Against the calibration set _{name}_** (higher = more member-like):")
    st.dataframe(
        [{"method": labels.get(r.method_key, r.method_key),
          "above % of known members": round(r.above_members, 1),
          "above % of known non-members": round(r.above_non_members, 1)} for r in rows],
        hide_index=True,
    )


def render_download(result: InspectResult) -> None:
    csv_text = token_table_csv([(p.name, p.analysis.records) for p in result.passages])
    st.download_button("Download the token table (CSV)", data=csv_text, file_name="leaklens_tokens.csv",
                       mime="text/csv", key="inspect_download", icon=":material/download:")


RESULT_CSS = """
<style>
[class*="st-key-slope_numbers_"] [data-testid="stMetricValue"] { font-size: 1.35rem; }
[class*="st-key-score_card_"] [data-testid="stMetricValue"] { font-size: 1.6rem; }
</style>
"""


def render_placements(result: InspectResult) -> None:
    """The verdict first: how the passage compares with freshly written text of similar length."""
    for passage, placement in zip(result.passages, result.placements):
        if placement is None:
            continue
        if len(result.passages) > 1:
            st.markdown(f"**{passage.name}**")
        finding_banner(placement_finding(placement))
        loss = placement.method("loss")
        if loss is not None:
            st.plotly_chart(placement_strip(loss, passage.name), width="stretch",
                            key=f"placement_{passage.name.replace(' ', '_')}")


def render_result(result: InspectResult) -> None:
    methods = default_methods()
    st.html(RESULT_CSS)
    render_truncation(result)
    render_placements(result)
    render_curve(result)
    render_heatmaps(result)
    render_scores(result, methods)
    render_download(result)


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
        st.selectbox("Place the scores among the known members and non-members of a finished membership "
                     "benchmark run", [None, *labels], format_func=lambda k: "None" if k is None else labels[k],
                     key=CALIBRATION_RUN, on_change=_use_calibration_run,
                     help="Scores are only comparable under the same model and methods: prefer a run of this model.")
        if not runs:
            st.caption("No finished membership benchmark run in the results store yet: run one on the Membership "
                       "benchmark page to calibrate with it.")
        if st.session_state.get(CALIBRATION_ERROR):
            st.error(st.session_state[CALIBRATION_ERROR])


def max_tokens_option() -> int:
    with st.expander("Options"):
        return int(st.number_input("Score at most this many tokens per passage", min_value=16, max_value=8192,
                                   value=DEFAULT_MAX_TOKENS, step=128, key="inspect_max_tokens",
                                   help="Longer passages are cut (with a warning); the model's context "
                                        "length is always a limit too."))
