"""The Inspect page's inputs and its one call into the test: the passages to analyse, the options, and
``analyse``, which runs ``core.passage.run.inspect_passage`` (scoring, placement among fresh passages,
continuation) with the page's progress bars and remembers results per session, so toggles never recompute the
model pass. The result is laid out by ``ui.passage_view``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core.data.examples import FRESH, GETTYSBURG, GETTYSBURG_PARAPHRASE, Example
from core.engine.handle import ModelHandle
from core.engine.progress import ProgressCallback
from core.errors import LeakLensError
from core.passage.inspection import DEFAULT_MAX_TOKENS, decode_text_upload
from core.passage.known_runs import calibration_from_run, calibration_label, calibration_runs
from core.passage.run import EXTRACTION, SCORING, InspectResult, inspect_passage
from core.passage.run import FRESH as FRESH_STAGE
from core.store.results import ResultStore
from ui.common import current_model_spec, current_start_token, streamlit_progress
from ui.freshness import Input, keep_result, setting, show_result, typed_text
from ui.passage_view import CALIBRATION, KGRAMS_PENDING, render_result

TEXT_A = "inspect_text_a"
TEXT_B = "inspect_text_b"
COMPARE = "inspect_compare"
UPLOAD = "inspect_upload"
UPLOAD_ERROR = "inspect_upload_error"
RESULT = "inspect_result"
CACHE = "inspect_cache"
KGRAMS_TODO = "inspect_kgrams_todo"
"""Set for the next script run: draw the verdict just computed, then add the k-gram pass."""
CALIBRATION_RUN = "inspect_calibration_run"
CALIBRATION_ERROR = "inspect_calibration_error"
CACHE_SIZE = 12

__all__ = ["KGRAMS_PENDING", "RESULT", "InspectResult", "analyse", "render_result"]


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


# ---------------------------------------------------------------- the test


def _progress(n_passages: int, complete: bool, where: DeltaGenerator | None) -> Callable[[str], ProgressCallback]:
    """One progress bar per stage of the inspection, drawn in ``where`` (above the passage's own result)."""
    scoring = "Scoring the passage" + ("s" if n_passages > 1 else "")
    labels = {
        SCORING: scoring + (" with k-gram contexts" if complete else ""),
        FRESH_STAGE: "Comparing with freshly written passages of similar length: scoring them once for this model",
        EXTRACTION: "Giving the model each passage's first half",
    }

    def stage(name: str) -> ProgressCallback:
        if where is None:
            return streamlit_progress(labels[name])
        with where:
            return streamlit_progress(labels[name])

    return stage


def _key(model: ModelHandle, passages: list[tuple[str, str]], max_tokens: int, complete: bool) -> tuple:
    return (model.spec, model.start_token_override, tuple(passages), max_tokens, complete)


def cached_result(
    model: ModelHandle, passages: list[tuple[str, str]], max_tokens: int, *, complete: bool
) -> InspectResult | None:
    """This session's earlier result for the same inputs; a complete one also serves a fast request."""
    cache: OrderedDict = st.session_state.setdefault(CACHE, OrderedDict())
    for wanted in (True,) if complete else (True, False):
        key = _key(model, passages, max_tokens, wanted)
        if key in cache:
            cache.move_to_end(key)
            return cache[key]
    return None


def _remember(result: InspectResult, model: ModelHandle, passages: list[tuple[str, str]], max_tokens: int) -> None:
    cache: OrderedDict = st.session_state.setdefault(CACHE, OrderedDict())
    cache[_key(model, passages, max_tokens, result.complete)] = result
    while len(cache) > CACHE_SIZE:
        cache.popitem(last=False)


def analyse(
    model: ModelHandle,
    passages: list[tuple[str, str]],
    max_tokens: int,
    *,
    complete: bool,
    status: DeltaGenerator | None = None,
    on_scored: Callable[[InspectResult], None] | None = None,
) -> InspectResult | None:
    """The inspection of ``passages`` (or this session's earlier one); a friendly message instead of raising.

    ``complete=False`` is the fast first view (main pass only); ``complete=True`` adds the k-gram pass, reusing
    the fast view's verdicts. ``on_scored`` draws the passages' own result before the verdict is computed;
    ``status`` is where the progress bars go.
    """
    empty = [name for name, text in passages if not text.strip()]
    if empty:
        st.info(
            f"{' and '.join(empty)} {'is' if len(empty) == 1 else 'are'} empty. Paste some text, pick an "
            "example or upload a .txt file in Setup, then press **Analyse**."
        )
        return None
    cached = cached_result(model, passages, max_tokens, complete=complete)
    if cached is not None:
        return cached
    fast = cached_result(model, passages, max_tokens, complete=False) if complete else None
    try:
        result = inspect_passage(
            model,
            passages,
            store=ResultStore(),
            max_tokens=max_tokens,
            with_kgrams=complete,
            progress=_progress(len(passages), complete, status),
            on_scored=on_scored,
            verdicts_from=fast,
        )
    except LeakLensError as exc:
        st.error(str(exc))
        return None
    if result.judged:
        _remember(result, model, passages, max_tokens)
    return result


@dataclass
class Shown:
    """Whether this script run has drawn the result already (the passages' own result, before the verdict)."""

    drawn: bool = False


def analyse_and_show(
    model: ModelHandle, passages: list[tuple[str, str]], max_tokens: int, inputs: list[Input], *, complete: bool
) -> tuple[InspectResult | None, bool]:
    """Analyse, drawing the passages' own result as soon as it is scored (the verdict's progress above it);
    returns the result and whether it was drawn."""
    shown = Shown()
    status = st.container()

    def draw(own: InspectResult) -> None:
        keep_result(RESULT, own, inputs)
        shown.drawn = show_result(RESULT, inputs, render_result, action="Analyse")

    result = analyse(model, passages, max_tokens, complete=complete, status=status, on_scored=draw)
    return result, shown.drawn


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
