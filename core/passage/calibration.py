"""Calibration sets from stored membership runs, so a single passage's scores can be read as percentiles.

A finished benchmark run already holds every sample's score per method with its 0/1 label: exactly the
known members and non-members a ``Calibration`` needs, with no model pass. Only runs scored with today's
score definitions qualify (older runs have some scores with the opposite sign), and runs of the model
being inspected come first, since scores of different models are not comparable.

The shipped set of freshly written passages (``assets/calibration/fresh_passages.jsonl``) is the other
kind of calibration: texts no model can have trained on, so a passage scoring above nearly all of them is
unusually predictable. Each model scores that set once; its scores live in the results store (kind
``calibration``) and are read back on every later call, through the one resumable run loop.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from core.config import ASSETS_DIR
from core.data.fingerprint import fingerprint_rows
from core.data.tables import load_rows
from core.engine.handle import ModelHandle
from core.engine.models import model_fact
from core.engine.progress import ProgressCallback
from core.engine.scoring import ScoringModel
from core.errors import DataError, LeakLensError
from core.membership.benchmark import SCORE_DEFINITIONS
from core.methods import Method, default_methods, score_all
from core.methods.auxiliary import compute_auxiliary
from core.methods.extraction import EXTRACTION_KEY, Extraction, continuation_digest, extract, extraction_score
from core.methods.neighbourhood import Neighbourhood
from core.methods.support import supported_methods
from core.passage.text_form import guess_group
from core.store.provenance import build_provenance
from core.store.results import ResultStore, SampleRow, score_or_nan
from core.store.runloop import RunRequest
from core.store.stored_run import run_meta, run_stored

FRESH_PASSAGES_PATH = ASSETS_DIR / "calibration" / "fresh_passages.jsonl"
FRESH_PASSAGES_ENV = "LEAKLENS_FRESH_PASSAGES"
"""Names a JSONL file of one's own freshly written passages (``id``, ``text``, optional ``form``) to use
instead of the shipped set: a team auditing one domain can calibrate with unpublished text of that domain."""
FRESH_KIND = "calibration"
"""Store kind of a model's scores on the fresh passages."""
FRESH_SET_NAME = "fresh calibration passages"
DEFAULT_FRESH_BATCH_SIZE = 16


@dataclass(frozen=True)
class FreshPassage:
    """One freshly written calibration passage (never published, so no model trained on it)."""

    id: str
    text: str
    form: str = ""
    """How it was written (``assets/calibration/README.md``); empty in a file without a ``form`` column."""


@dataclass(frozen=True)
class FreshCalibration:
    """One model's scores on the fresh passages, in file order, read from (or written to) the store."""

    model: str
    run_id: str
    ids: tuple[str, ...]
    n_tokens: tuple[int, ...]
    """Tokens scored per passage under this model's tokenizer (lengths are compared in tokens)."""
    scores: Mapping[str, tuple[float, ...]]
    """Per method key, one score per passage (higher = more predictable); NaN where a method failed."""
    method_labels: Mapping[str, str] = field(default_factory=dict)
    groups: tuple[str, ...] = ()
    """Per passage, the kind of text it is compared as (``core.passage.text_form.guess_group``)."""
    n_computed: int = 0
    """Passages scored by this call (0 when everything came from the store)."""
    notes: tuple[str, ...] = ()
    n_set: int = 0
    """Passages in the whole fresh set; more than ``n`` while only those a verdict needed are scored."""
    source: str = "store"
    """Where the scores came from: ``shipped`` (with LeakLens), ``store`` (scored before) or ``scored`` (now)."""
    forms: tuple[str, ...] = ()
    """Per passage, how it was written (its ``form``: recipe, changelog, narrative...), for naming the kind."""
    set_passages: tuple[FreshPassage, ...] = ()
    """The whole fresh set these passages belong to: its embeddings find a passage's nearest fresh passages in
    kind (``core.passage.kind``). Empty: no embeddings, the placement reads plain scores."""

    embeddings: np.ndarray | None = field(default=None, compare=False, repr=False)
    """Unit sentence embeddings of these passages in ``ids`` order, when given directly (a hand-made set);
    otherwise read from the fresh set's (``vectors``)."""

    def vectors(self) -> np.ndarray | None:
        """Unit sentence embeddings of these passages (in ``ids`` order), or None without a fresh set."""
        if self.embeddings is not None:
            return self.embeddings
        if not self.set_passages:
            return None
        every = _set_vectors(self.set_passages)
        position = {p.id: i for i, p in enumerate(self.set_passages)}
        return every[[position[i] for i in self.ids]]

    @property
    def n(self) -> int:
        return len(self.ids)

    @property
    def complete(self) -> bool:
        """Every passage of the set is scored (not only those the verdicts so far needed)."""
        return self.n >= self.n_set

    def describe(self) -> dict[str, Any]:
        """Where the fresh scores came from and how many there are, for ``--out`` files and provenance."""
        return {
            "source": self.source,
            "run_id": self.run_id,
            "scored_now": self.n_computed,
            "scored": self.n,
            "set_size": self.n_set,
        }

    @property
    def from_store(self) -> bool:
        return self.n_computed == 0

    def label(self, key: str) -> str:
        return self.method_labels.get(key, key)


@lru_cache(maxsize=4)
def _set_vectors(passages: tuple[FreshPassage, ...]) -> np.ndarray:
    """A fresh set's embeddings, once per process: shipped, cached, or embedded now (``core.passage.kind``)."""
    from core.passage.kind import fresh_embeddings

    return fresh_embeddings(fresh_set_fingerprint(passages), [p.text for p in passages])


def fresh_passages_path() -> Path:
    """The fresh set in use: ``$LEAKLENS_FRESH_PASSAGES`` when set, else the shipped one."""
    return Path(os.environ.get(FRESH_PASSAGES_ENV) or FRESH_PASSAGES_PATH)


def load_fresh_passages(path: str | Path | None = None) -> tuple[FreshPassage, ...]:
    """The calibration passages of a JSONL file with ``id`` and ``text``; strict, since every row is compared."""
    path = path or fresh_passages_path()
    table = load_rows(str(path))
    table.require_columns("id", "text")
    if table.skipped:
        raise DataError(f"{path}: {table.skipped_summary()}; fix those lines, every passage is used.")
    passages = tuple(FreshPassage(str(row["id"]), str(row["text"]), str(row.get("form") or "")) for row in table.rows)
    empty = [p.id for p in passages if not p.text.strip()]
    if empty:
        raise DataError(f"{path}: passage(s) {', '.join(empty[:5])} have no text.")
    ids = [p.id for p in passages]
    if len(set(ids)) != len(ids):
        raise DataError(f"{path}: passage ids must be unique.")
    return passages


def fresh_set_fingerprint(passages: Sequence[FreshPassage]) -> str:
    """Fingerprint over ids and texts: an edited passage means new scores, never stale ones."""
    return fingerprint_rows((p.id, p.text) for p in passages)


FRESH_NEIGHBOURHOOD = Neighbourhood(n_neighbours=3, fraction=0.15)
"""The difficulty-controlled reading the verdict places a passage by: its loss against three close rewordings
of itself. Text that is predictable because of its kind (a recipe, a licence) is as predictable reworded; text
the model has read is predictable only in its own words (``core.passage.placement``)."""


def fresh_methods() -> list[Method]:
    """The detectors scored on the fresh set: every default one that the main pass alone serves, the
    neighbourhood comparison the verdict places by (an alternatives pass and three rewordings per passage), and
    the extraction test (one batched generation of at most 64 tokens per passage).

    k-gram slopes need about six times the main pass and other auxiliary methods need extra models or passes;
    loss and Min-K% and their cheap siblings cost nothing beyond the one pass.
    """
    cheap = [m for m in default_methods() if m.kgram_needed == 0 and not m.needs]
    return [*cheap, FRESH_NEIGHBOURHOOD, Extraction()]


def fresh_run_key(model: ModelHandle, passages: Sequence[FreshPassage], methods: Sequence[Method]) -> dict[str, Any]:
    """Store key of one model's scores on one fresh set: weights, start token, precision, passages, methods.

    Device and dtype are part of the key (not only the recorded setup), so scoring on a GPU in bfloat16
    gets its own calibration instead of being refused as a setup mismatch: percentiles compare a passage
    with passages scored exactly as it was.
    """
    return {
        **model.key,
        "passages": fresh_set_fingerprint(passages),
        "methods": sorted(m.key for m in methods),
        "score_definitions": SCORE_DEFINITIONS,
        "device": model.setup.device,
        "dtype": model.setup.dtype,
    }


def one_time_line(n: int, duration: str) -> str:
    """What a newcomer reads when the fresh passages a verdict needs are scored for a model the first time."""
    when = f", {duration}" if duration else ""
    return f"Scoring {n} fresh passages of similar length once for this model{when}; later runs reuse them."


def fresh_lengths(lm: ScoringModel, passages: Sequence[FreshPassage]) -> tuple[int, ...]:
    """Each passage's scored token count under ``lm``, as its calibration sample will record it, from the
    tokenizer alone: which fresh passages a passage is compared with is known before any is scored.

    Kept for the process per model source and set: each passage inspected before the set is complete asks again,
    and a served model's tokenizer is a request per passage, for every one of the set."""
    from core.engine.scoring import encode_texts

    def count(source: ScoringModel) -> tuple[int, ...]:
        return tuple(len(e.ids) for e in encode_texts(source, [p.text for p in passages]))

    return model_fact(lm, f"fresh lengths {fresh_set_fingerprint(passages)}", count)


def stored_fresh_calibration(
    model: ModelHandle,
    *,
    store: ResultStore | None = None,
    passages: Sequence[FreshPassage] | None = None,
    methods: Sequence[Method] | None = None,
    batch_size: int = DEFAULT_FRESH_BATCH_SIZE,
    progress: ProgressCallback | None = None,
    options: Mapping[str, Any] | None = None,
    only: Sequence[int] | Callable[[Sequence[FreshPassage]], Sequence[int]] | None = None,
    shipped: bool = True,
    reuse_shipped: bool = False,
) -> FreshCalibration:
    """``model``'s scores on the fresh passages: read from the store, scored (and stored) only when missing.

    The model is loaded only when a passage is left to score. ``passages`` and ``methods`` default to the
    shipped set and ``fresh_methods()``. With ``shipped``, scores shipped for exactly this key
    (``core.passage.shipped_calibration``) are copied into the store first, so the bundled model needs no pass
    at all. ``only``: the positions to have
    scored now, in order (``passage_finding.fresh_positions_for``), or a function of the passages giving
    them, called only when the set is not already complete in the store (it may tokenize them all); the
    calibration then holds every passage stored so far, and ``complete`` says whether that is the whole set.
    ``reuse_shipped`` (rebuilding the shipped file): the shipped scores of passages that did not change are kept.
    """
    from core.engine.scoring import score_texts
    from core.passage.shipped_calibration import reusable_samples, seed_from_shipped, seed_unfinished

    setup = model.setup
    chosen, _ = supported_methods(model, fresh_methods() if methods is None else list(methods))
    if not chosen:
        raise LeakLensError("No method to score the fresh passages with.")
    rows = tuple(passages) if passages is not None else load_fresh_passages()
    if not rows:
        raise DataError("The fresh calibration set is empty.")
    key = fresh_run_key(model, rows, chosen)
    identity = model.recorded_identity
    meta = run_meta(
        dataset=FRESH_SET_NAME,
        model=model.spec,
        n_total=len(rows),
        task="fresh calibration",
        provenance=build_provenance(
            command="calibration", options=dict(options or {}), models={"model": identity}, setup=setup.to_dict()
        ),
        methods=[m.key for m in chosen],
        method_labels={m.key: m.label for m in chosen},
        model_identity=identity,
    )
    plain = [m for m in chosen if not isinstance(m, Extraction)]
    extractions = [m for m in chosen if isinstance(m, Extraction)]

    def score(lm: ScoringModel, positions: list[int]) -> list[SampleRow]:
        texts = [rows[i].text for i in positions]
        records = score_texts(lm, texts, kgram_max=0)
        aux = compute_auxiliary(lm, texts, plain, records)
        scores = [dict(score_all(plain, rec, a)) for rec, a in zip(records, aux, strict=True)]
        summaries: list[dict[str, Any]] = [{"n_tokens": rec.n_tokens, "loss": rec.loss} for rec in records]
        for method in extractions:
            for i, (continuation,) in enumerate(extract(lm, records, (method.fraction,))):
                scores[i][method.key] = extraction_score(continuation)
                if continuation is not None and method.key == EXTRACTION_KEY:
                    summaries[i]["continuation"] = continuation_digest(continuation.generated_ids)
        # dict(): a dict[str, float | None], the type SampleRow holds (dict is invariant in its values)
        return [
            SampleRow(rows[i].id, None, dict(sc), sm) for i, sc, sm in zip(positions, scores, summaries, strict=True)
        ]

    def summarise(samples: list[SampleRow]) -> dict[str, Any]:
        tokens = sorted(int(s.summary["n_tokens"]) for s in samples)
        return {"n": len(samples), "min_tokens": tokens[0], "max_tokens": tokens[-1]}

    store = store or ResultStore()
    request = RunRequest(FRESH_KIND, key, meta, setup.to_dict())
    ids = [p.id for p in rows]
    seeded = seed_from_shipped(store, request, ids, summarise) if shipped else None
    if reuse_shipped:  # a rebuild of the shipped file: keep the scores of passages that did not change
        passage_of = {p.id: p for p in rows}

        def fingerprint_of(shipped_ids: Sequence[str]) -> str | None:
            if any(i not in passage_of for i in shipped_ids):
                return None
            return fresh_set_fingerprint([passage_of[i] for i in shipped_ids])

        seed_unfinished(store, request, reusable_samples(request, fingerprint_of))
    if callable(only):
        stored = store.find_run(FRESH_KIND, key)
        only = None if stored is not None and stored.finished else only(rows)
    outcome = run_stored(
        store,
        request,
        ids,
        load=model.load,
        score=score,
        summarise=summarise,
        batch_size=batch_size,
        progress=progress,
        only=only,
    )
    notes = outcome.notes
    by_id = {s.sample_id: s for s in outcome.samples}
    held = [p for p in rows if p.id in by_id]  # file order, whatever order they were scored in
    ordered = [by_id[p.id] for p in held]
    source = "shipped" if seeded is not None else ("scored" if outcome.n_computed else "store")
    return FreshCalibration(
        model=model.spec,
        run_id=outcome.run.run_id,
        ids=tuple(p.id for p in held),
        n_tokens=tuple(int(s.summary["n_tokens"]) for s in ordered),
        scores={m.key: tuple(score_or_nan(s.scores.get(m.key)) for s in ordered) for m in chosen},
        method_labels={m.key: m.label for m in chosen},
        groups=tuple(guess_group(p.text) for p in held),
        n_computed=outcome.n_computed,
        notes=notes,
        n_set=len(rows),
        source=source,
        forms=tuple(p.form for p in held),
        set_passages=rows,
    )
