"""Run dataset inference: score both sets once with every detector, then test the set, not the texts.

Scoring is a membership benchmark run with suspect texts labelled 1 and validation texts 0, so it goes
through the one resumable run loop and the store (an interrupted run resumes; the same sets and model
are read back), and it brings the blind baseline between the two sets for free. The test itself
(``core.dataset_inference.statistic``) is cheap and deterministic given its seed, so a stored run of kind
``dataset-inference`` keeps only which scores it used and its settings: the result is recomputed from
the stored scores whenever it is opened.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from core.data.labelled import LabelledDataset, fingerprint
from core.data.text_sets import TextSet
from core.dataset_inference.finding import inference_finding
from core.dataset_inference.statistic import (
    DEFAULT_SEED,
    DEFAULT_SPLITS,
    InferenceResult,
    dataset_inference,
    texts_for_power,
)
from core.engine.handle import ModelHandle
from core.engine.progress import ProgressCallback
from core.engine.scoring import MAX_KGRAM
from core.errors import DataError, LeakLensError
from core.membership.benchmark import (
    DEFAULT_BATCH_SIZE,
    BenchmarkResult,
    result_from_store,
    run_membership_benchmark,
)
from core.methods.analysis import kgram_needed
from core.methods.base import Method
from core.methods.registry import default_methods
from core.stats.finding import Finding
from core.store.results import ResultStore, RunInfo
from core.store.stored_run import finished_run

KIND = "dataset-inference"
SUSPECT, VALIDATION = "suspect", "validation"

QUICK_METHOD_KEYS = ("loss", "zlib", "min_k_20", "min_k_pp_20")
"""The page's default detectors: all four read one forward pass per text, so the shipped demo (64 + 64 texts)
finishes well inside the README tour's five minutes on a 2-core CPU with the bundled SmolLM2-135M. The full
standard set (``default_methods``) adds the probability slopes, whose k-gram normalisation scores every token
again in windows of up to six tokens, several times the time (both measured: docs/benchmarks.md, Dataset
inference)."""
SECONDS_PER_TEXT = 1.0
"""Seconds per text for one forward pass (the quick set): SmolLM2-135M on a 2-core CPU shared with other work,
demo texts of about 130 tokens. Calibrated on the page's defaults (docs/benchmarks.md, Dataset inference)."""
SECONDS_PER_TEXT_KGRAM = 4.5
"""Seconds the k-gram windows of the full set (k up to 6) add per text, same machine, model and texts
(calibrated against the quick set: docs/benchmarks.md, Dataset inference)."""
LOAD_SECONDS = 5.0
"""Loading the bundled model from its cached weights, reading the sets and the test itself."""


def estimated_seconds(n_texts: int, methods: Sequence[Method] | None = None) -> float:
    """Rough run time for ``n_texts`` texts (both sets) with ``methods`` (default: the full standard set) under
    the bundled SmolLM2-135M on a 2-core CPU, texts of about 130 tokens. Longer texts, larger models and busier
    machines take longer; a GPU takes far less. For the choice of a detector set, not a promise."""
    chosen = list(methods) if methods else default_methods()
    kgram = kgram_needed(chosen)
    per_text = SECONDS_PER_TEXT + SECONDS_PER_TEXT_KGRAM * kgram / MAX_KGRAM
    return LOAD_SECONDS + n_texts * per_text


@dataclass(frozen=True)
class DatasetInference:
    """One run: the names of the two sets, the per-text scores behind it, the test and its verdict."""

    suspect: str
    validation: str
    scores: BenchmarkResult
    """Per-text detector scores (suspect = label 1) with per-detector AUROCs and the blind baseline."""
    result: InferenceResult
    finding: Finding
    run_id: str = ""
    """The stored run's id ("" when nothing was stored): a shared link opens it."""

    @property
    def model(self) -> str:
        return self.scores.model

    def to_dict(self) -> dict[str, Any]:
        """The ``--out`` document (the CLI adds provenance)."""
        blind = self.scores.blind_baseline
        return {
            "finding": self.finding.to_dict(),
            "suspect": self.suspect,
            "validation": self.validation,
            "model": self.model,
            "p_value": self.result.p_value,
            "n_suspect": self.result.n_suspect,
            "n_validation": self.result.n_validation,
            "blind_baseline": None if blind is None else blind.to_dict(),
            "weights": dict(self.result.weights),
            "effect_size": self.result.effect_size,
            "texts_needed": texts_for_power(self.result.effect_size),
            "inference": self.result.to_dict(),
            "per_text_auroc": {key: (None if m is None else m.to_dict()) for key, m in self.scores.metrics.items()},
            "left_out": list(self.scores.left_out),
        }


def inference_dataset(suspect: TextSet, validation: TextSet) -> LabelledDataset:
    """Both sets as one labelled dataset (suspect = 1); a text in both sets is an error, not a guess."""
    shared = set(suspect.texts) & set(validation.texts)
    if shared:
        raise DataError(
            f"{len(shared)} text(s) appear in both {suspect.name} and {validation.name}; a text "
            "cannot be both suspect and validation. Remove them from one set."
        )
    texts = [*suspect.texts, *validation.texts]
    labels = [1] * len(suspect) + [0] * len(validation)
    ids = [f"{SUSPECT}:{i}" for i in suspect.ids] + [f"{VALIDATION}:{i}" for i in validation.ids]
    return LabelledDataset(
        texts=texts,
        labels=labels,
        ids=ids,
        source=f"{suspect.name} vs {validation.name}",
        text_col=suspect.text_col,
        label_col="set",
        skipped=[*suspect.skipped, *validation.skipped],
        fingerprint=fingerprint(texts, labels, ids),
    )


def infer_from_scores(
    scores: BenchmarkResult, suspect: str, validation: str, *, n_splits: int = DEFAULT_SPLITS, seed: int = DEFAULT_SEED
) -> DatasetInference:
    """The test on already-computed scores (a fresh run, or one read back from the store)."""
    features = np.column_stack([scores.scores(key) for key in scores.method_keys])
    is_suspect = [label == 1 for label in scores.labels]
    result = dataset_inference(features, is_suspect, scores.method_keys, n_splits=n_splits, seed=seed)
    finding = inference_finding(result, scores.blind_baseline, suspect=suspect, validation=validation)
    return DatasetInference(suspect, validation, scores, result, finding)


def run_dataset_inference(
    suspect: TextSet,
    validation: TextSet,
    model: ModelHandle,
    methods: Sequence[Method] | None = None,
    *,
    n_splits: int = DEFAULT_SPLITS,
    seed: int = DEFAULT_SEED,
    store: ResultStore | None = None,
    progress: ProgressCallback | None = None,
    options: Mapping[str, Any] | None = None,
    max_tokens: int | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> DatasetInference:
    """Score both sets (resuming from the store), run the test and store the run so it can be reopened.

    ``batch_size``: texts scored and stored together (``core.store.runloop.progress_batch_size`` for a run someone
    watches)."""
    store = store or ResultStore()
    scores = run_membership_benchmark(
        inference_dataset(suspect, validation),
        model,
        methods,
        store=store,
        progress=progress,
        options=options,
        max_tokens=max_tokens,
        batch_size=batch_size,
    )
    inference = infer_from_scores(scores, suspect.name, validation.name, n_splits=n_splits, seed=seed)
    key = {"scores_run": scores.run_id, "n_splits": n_splits, "seed": seed}
    meta = {
        "dataset": f"{suspect.name} vs {validation.name}",
        "model": model.spec,
        "n_total": 0,
        "suspect": suspect.name,
        "validation": validation.name,
    }
    run = store.get_or_create_run(KIND, key, meta)
    if not run.finished:
        store.finish_run(run.run_id, {"p_value": inference.result.p_value, "finding": inference.finding.to_dict()})
    return replace(inference, run_id=run.run_id)


def inference_from_run(store: ResultStore, run: RunInfo) -> DatasetInference:
    """A stored dataset-inference run, recomputed from its stored scores (no model needed)."""
    finished_run(run, KIND, "a dataset-inference run")
    scores_run = store.get_run(str(run.key.get("scores_run", "")))
    if scores_run is None or not scores_run.finished:
        raise LeakLensError(
            f"The scores behind dataset-inference run {run.run_id} are no longer stored (or not "
            "finished); run dataset inference again on the same sets and model."
        )
    inference = infer_from_scores(
        result_from_store(store, scores_run),
        str(run.meta["suspect"]),
        str(run.meta["validation"]),
        n_splits=int(run.key["n_splits"]),
        seed=int(run.key["seed"]),
    )
    return replace(inference, run_id=run.run_id)
