"""The single-passage test, end to end, in one call both front ends make (the Inspect page and ``inspect``).

``inspect_passage`` scores the passages, hands their own result to ``on_scored`` at once (the page draws the
curve and scores while the verdict is still to come), places each among the freshly written passages of
similar length (shipped, stored, or scored now and stored), gives the model each passage's first half to
continue, and reads both as one finding per passage. Progress goes to ``progress(stage)``, one callback per
stage; a callback may raise to cancel (the page's Cancel does, through Streamlit), and every fresh passage
scored before that stays stored.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from core.engine.handle import ModelHandle
from core.engine.progress import ProgressCallback
from core.engine.records import scored_text
from core.engine.scoring import ScoringModel
from core.errors import LeakLensError
from core.methods import Method, default_methods
from core.methods.reference import reference_source
from core.methods.support import supported_methods
from core.passage.calibration import stored_fresh_calibration
from core.passage.inspection import DEFAULT_MAX_TOKENS, inspect_passages, reference_points
from core.passage.placement import fresh_positions_for, placing_methods
from core.passage.result import InspectResult
from core.passage.stored import store_inspection
from core.passage.summary import ReferencePoint
from core.passage.text_form import guess_group
from core.passage.verdict import judge_passages
from core.store.results import ResultStore

SCORING = "passages"
FRESH = "fresh"
EXTRACTION = "extraction"
STAGES = (SCORING, FRESH, EXTRACTION)
"""What the progress of one inspection is about, in order: the passages' own scores, the fresh passages they are
compared with (scored once per model, only when neither shipped nor stored), the continuation test."""

ProgressFor = Callable[[str], ProgressCallback | None]


def inspection_methods(lm: ScoringModel, asked: Sequence[Method] | None) -> tuple[list[Method], list[str]]:
    """The methods to run: those asked (default: the standard set) plus the ones the finding places the passage
    by, less any this model cannot run (with the reason)."""
    chosen = list(asked) if asked is not None else default_methods()
    placed = [m for m in placing_methods() if m.key not in {c.key for c in chosen}]
    return supported_methods(lm, chosen + placed)


def inspect_passage(
    model: ModelHandle,
    passages: Sequence[tuple[str, str]],
    *,
    store: ResultStore,
    max_tokens: int | None = DEFAULT_MAX_TOKENS,
    methods: Sequence[Method] | None = None,
    with_kgrams: bool = True,
    kgram_columns: bool = True,
    extraction: bool = True,
    judge: bool = True,
    progress: ProgressFor | None = None,
    on_scored: Callable[[InspectResult], None] | None = None,
    verdicts_from: InspectResult | None = None,
) -> InspectResult:
    """Inspect ``(name, text)`` passages under ``model`` (loaded here on first use).

    ``with_kgrams=False`` is the fast first view (no k-gram pass); ``kgram_columns=False`` keeps only the k-gram
    columns the methods need (no display of the others). ``judge=False`` stops after the passages'
    own scores. ``verdicts_from`` (the fast view of the same passages) lends its verdicts to the k-gram pass,
    which changes none of the scores the verdict reads. ``extraction=False`` skips the
    continuation test. A failure to place the passages is kept in ``placement_error``, not raised: the
    passages' own result stands without it.
    """
    stage = progress or (lambda _: None)
    lm = model.load()
    chosen, left_out = inspection_methods(lm, methods)
    found = inspect_passages(
        lm,
        passages,
        methods=chosen,
        max_tokens=max_tokens,
        with_kgrams=with_kgrams,
        kgram_columns=kgram_columns,
        progress=stage(SCORING),
        reference_lm=reference_source(model, chosen),
    )
    references, references_note = _references(lm)
    result = InspectResult(
        model=model.spec,
        passages=tuple(found),
        complete=with_kgrams,
        texts=tuple(text for _, text in passages),
        judged=False,
        asked=tuple(passages),
        max_tokens=max_tokens,
        left_out=tuple(left_out),
        references=references,
        references_note=references_note,
    )
    if verdicts_from is not None and verdicts_from.judged:
        result = replace(
            result,
            placements=verdicts_from.placements,
            placement_error=verdicts_from.placement_error,
            verdicts=verdicts_from.verdicts,
            fresh=verdicts_from.fresh,
            judged=True,
        )
    else:
        if on_scored is not None:
            on_scored(result)
        if not judge:
            return result
        result = _judged(model, result, store=store, extraction=extraction, stage=stage)
    if len(result.verdicts) != len(result.passages):
        return result  # not placed (the reason is in placement_error): nothing to keep
    run = store_inspection(store, result, model.key)
    return replace(result, run_id=run.run_id)


def _references(lm: ScoringModel) -> tuple[tuple[ReferencePoint, ...], str]:
    """The built-in examples' perplexities for scale, or why they could not be scored (the passages' own result
    stands without them)."""
    try:
        return tuple(reference_points(lm)), ""
    except LeakLensError as exc:
        return (), f"Reference examples could not be scored: {exc}"


def _judged(
    model: ModelHandle,
    result: InspectResult,
    *,
    store: ResultStore,
    extraction: bool,
    stage: ProgressFor,
) -> InspectResult:
    """Each passage among the fresh passages of its length (nearest in length first; only those, for a model
    whose scores are neither shipped nor stored), and its first half continued by the model."""
    lm = model.load()
    wanted = [(p.analysis.records.n_tokens, guess_group(scored_text(p.analysis.records))) for p in result.passages]
    try:
        calibration = stored_fresh_calibration(
            model,
            store=store,
            progress=stage(FRESH),
            only=lambda rows: fresh_positions_for(lm, rows, wanted),
        )
        scored = [(p.analysis.scores, p.analysis.records) for p in result.passages]
        verdicts = tuple(judge_passages(lm, scored, calibration, extraction=extraction, progress=stage(EXTRACTION)))
    except LeakLensError as exc:
        return replace(result, placement_error=str(exc), judged=True)
    return replace(
        result,
        placements=tuple(v.placement for v in verdicts),
        verdicts=verdicts,
        fresh=calibration.describe(),
        judged=True,
    )
