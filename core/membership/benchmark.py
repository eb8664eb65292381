"""Membership benchmark runs: score a labelled dataset with many detectors, persist, and evaluate.

A run is (dataset fingerprint, model spec, method set, scoring options). Samples are scored in batches and
each batch is written to the results store before the next starts, so an interrupted run loses at most
one batch and resumes where it stopped; a finished run is read back from the store without loading the
model. Metrics (AUROC with bootstrap CI, TPR at low FPR) are computed per method, next to the model-free
blind baseline and a cross-validated ensemble of all methods.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from core.data.labelled import LabelledDataset
from core.data.tables import display_name as dataset_display_name
from core.engine.handle import ModelHandle
from core.engine.identity import identity_digest
from core.engine.progress import ProgressCallback
from core.errors import DataError, LeakLensError
from core.methods import Method, default_methods, score_all
from core.methods.reference import ReferenceModel, reference_source
from core.methods.support import supported_methods
from core.stats.metrics import MetricResult, blind_baseline, ensemble, evaluate, roc_points
from core.store.provenance import build_provenance
from core.store.results import ResultStore, RunInfo, SampleRow, run_id_for, score_or_nan
from core.store.runloop import DEFAULT_BATCH_SIZE, RunRequest
from core.store.stored_run import finished_run, run_meta, run_stored

KIND = "mia"
"""Store kind of membership benchmark runs."""
PREVIEW_CHARS = 160
SCORE_DEFINITIONS = 3
"""Part of every run key. Raised whenever a stored score would change meaning for the same method key, so
runs stored before are never read back as if computed now (2: the adjusted slopes are negated; 3: zlib
compresses only the scored text of a truncated passage)."""
OLD_DEFINITIONS_NOTE = (
    "Stored by an earlier LeakLens under older score definitions: before version 2 its mean- and z-adjusted "
    "slope scores had the opposite sign (their AUROC is 1 − today's); before version 3 the zlib ratio of a "
    "passage cut to --max-tokens or the context divided by the compressed size of the whole text, not of the "
    "part scored. Run the benchmark again to score it with the current definitions."
)


@dataclass(frozen=True)
class BenchmarkResult:
    """Everything one membership benchmark run produced, ready for tables, figures and JSON."""

    run_id: str
    dataset: str
    """Display name of the data (file name or hub id)."""
    fingerprint: str
    model: str
    method_keys: list[str]
    method_labels: dict[str, str]
    samples: list[SampleRow]
    """Per-sample scores in dataset order."""
    metrics: dict[str, MetricResult | None]
    """Per method; None when a method produced no usable score (all NaN)."""
    blind_baseline: MetricResult | None
    ensemble: MetricResult | None
    status: str = "finished"
    n_computed: int = 0
    """Samples scored by this call (0 when everything came from the store)."""
    n_truncated: int = 0
    """Samples cut to ``max_tokens`` or to the model's context, scored on their first tokens only."""
    n_cut_at_max_tokens: int = 0
    """Of ``n_truncated``, the samples cut at ``max_tokens`` (the limit asked for) rather than at the context."""
    elapsed_s: float = 0.0
    notes: list[str] = field(default_factory=list)
    """Problems worth showing next to the table (e.g. why the baseline is missing)."""
    left_out: list[str] = field(default_factory=list)
    """Detectors asked for that the model source cannot compute, each with the reason (also in ``notes``)."""
    n_shared_texts: int | None = None
    """Texts whose exact wording is found in both classes (as a member and as a non-member): no detector can
    separate those. None for runs stored before this was counted."""
    provenance: dict[str, Any] = field(default_factory=dict)
    """What produced this result: the call that asked for it (its dataset, options, model identities), also
    when its scores were read back from a run stored by an earlier call; for a result rebuilt from the store
    alone (``result_from_store``), the provenance stored with the run."""

    @property
    def n(self) -> int:
        return len(self.samples)

    @property
    def labels(self) -> list[int]:
        return [int(s.label) for s in self.samples if s.label is not None]

    @property
    def from_store(self) -> bool:
        return self.n_computed == 0

    def scores(self, key: str) -> list[float]:
        """One method's scores in sample order, missing ones as NaN."""
        return [score_or_nan(s.scores.get(key)) for s in self.samples]

    def roc(self, key: str) -> tuple[list[float], list[float]]:
        """(fpr, tpr) points of one method's ROC curve."""
        fpr, tpr = roc_points(self.labels, self.scores(key))
        return fpr.tolist(), tpr.tolist()

    def table_rows(self) -> list[dict[str, Any]]:
        """One row per method plus the blind baseline and the ensemble, for tables and CSV."""
        rows = []
        entries: list[tuple[str, str, MetricResult | None]] = [
            (k, self.method_labels.get(k, k), self.metrics.get(k)) for k in self.method_keys
        ]
        entries.append(("blind_baseline", "Blind baseline (bag of words, no model)", self.blind_baseline))
        entries.append(("ensemble", "Ensemble (all methods, cross-validated)", self.ensemble))
        for key, label, metric in entries:
            rows.append(
                {
                    "dataset": self.dataset,
                    "model": self.model,
                    "method": key,
                    "label": label,
                    "auroc": None if metric is None else metric.auroc,
                    "ci_low": None if metric is None else metric.ci[0],
                    "ci_high": None if metric is None else metric.ci[1],
                    "tpr_at_1_fpr": None if metric is None else metric.tpr_at_1_fpr,
                    "tpr_at_5_fpr": None if metric is None else metric.tpr_at_5_fpr,
                    "n": None if metric is None else metric.n,
                    "run_id": self.run_id,
                }
            )
        return rows

    def to_json(self) -> dict[str, Any]:
        """The ``--out`` document: dataset, model, n, per-method metrics, baseline, ensemble, samples, and the notes
        (a detector left out, with the reason, is in every output, not only the table)."""
        return {
            "dataset": self.dataset,
            "model": self.model,
            "n": self.n,
            "methods": {k: _metric_json(self.metrics.get(k)) for k in self.method_keys},
            "blind_baseline": _metric_json(self.blind_baseline),
            "ensemble": _metric_json(self.ensemble),
            "samples": [
                {"id": s.sample_id, "label": s.label, "scores": {k: _finite(s.scores.get(k)) for k in self.method_keys}}
                for s in self.samples
            ],
            "notes": list(self.notes),
        }


def run_key(
    dataset: LabelledDataset,
    model_spec: str,
    methods: Sequence[Method],
    max_tokens: int | None,
    model_identity: Mapping[str, Any] | None = None,
    start_token: str | None = None,
) -> dict:
    """What identifies a run in the store: the same data, model weights, methods and options give the same run."""
    key: dict[str, Any] = {
        "dataset": dataset.fingerprint,
        "model": model_spec,
        "methods": sorted(m.key for m in methods),
        "score_definitions": SCORE_DEFINITIONS,
    }
    if model_identity is not None:
        key["model_identity"] = identity_digest(dict(model_identity))
    if start_token is not None:
        key["start_token"] = start_token
    if max_tokens is not None:
        key["max_tokens"] = int(max_tokens)
    return key


def resolve_methods(methods: Sequence[Method] | None, reference_model: str | None) -> list[Method]:
    """The method list to run: default set when None; ``reference_model`` adds a reference-model method."""
    chosen = list(methods) if methods else default_methods()
    if reference_model:
        spec = reference_model.strip()
        if not any(isinstance(m, ReferenceModel) and m.reference.strip() == spec for m in chosen):
            chosen.append(ReferenceModel(reference=spec))
    keys = [m.key for m in chosen]
    if len(set(keys)) != len(keys):
        raise LeakLensError(f"The method list names a method twice ({', '.join(keys)}).")
    return chosen


def run_membership_benchmark(
    dataset: LabelledDataset,
    model: ModelHandle,
    methods: Sequence[Method] | None = None,
    *,
    store: ResultStore | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    reference_model: str | None = None,
    max_tokens: int | None = None,
    progress: ProgressCallback | None = None,
    options: Mapping[str, Any] | None = None,
) -> BenchmarkResult:
    """Score ``dataset`` under ``model`` with ``methods``, resuming from and writing to ``store``.

    The model is loaded only when samples remain to be scored. ``progress(done, total)`` counts samples,
    including those already stored. ``options`` are recorded in the run's provenance. A reference model loads
    beside ``model`` (same setup and loader) with its own start-token rule.
    """
    started = time.perf_counter()
    store = store or ResultStore()
    setup = model.setup
    chosen, left_out = supported_methods(model, resolve_methods(methods, reference_model))
    identities = {"model": model.recorded_identity}
    references = [model.beside(m.reference) for m in chosen if isinstance(m, ReferenceModel)]
    if references:
        identities["reference"] = references[0].recorded_identity
    key = run_key(dataset, model.spec, chosen, max_tokens, model.identity, model.start_token)
    if "reference" in identities:
        key["reference_identity"] = identity_digest(identities["reference"])
    meta = run_meta(
        dataset=dataset_display_name(dataset.source),
        model=model.spec,
        n_total=dataset.n,
        provenance=build_provenance(
            command="mia", options=dict(options or {}), models=identities, setup=setup.to_dict()
        ),
        source=dataset.source,
        n_members=dataset.n_members,
        text_col=dataset.text_col,
        label_col=dataset.label_col,
        methods=[m.key for m in chosen],
        method_labels={m.key: m.label for m in chosen},
        skipped=dataset.skipped_summary(),
        model_identity=identities["model"],
    )
    truncated = [0, 0]  # cut at all, cut at max_tokens

    def load() -> tuple[Any, Any]:
        return model.load(), reference_source(model, chosen)

    def score(models: tuple[Any, Any], positions: list[int]) -> list[SampleRow]:
        rows, n_truncated, n_cut = _score_batch(models[0], models[1], dataset, positions, chosen, max_tokens)
        truncated[0] += n_truncated
        truncated[1] += n_cut
        return rows

    def summarise(samples: list[SampleRow]) -> dict[str, Any]:
        return _summary(_evaluate(dataset, run_id_for(KIND, key), model.spec, chosen, samples))

    outcome = run_stored(
        store,
        RunRequest(KIND, key, meta, setup.to_dict()),
        dataset.ids,
        load=load,
        score=score,
        summarise=summarise,
        batch_size=batch_size,
        progress=progress,
    )
    result = result_from_store(store, outcome.run, order=dataset.ids)
    notes = [*outcome.notes, *left_out, *result.notes]
    # The run is keyed by content: scores stored for the same texts under another file name (or with other
    # options that change no score) are read back, but the result describes this call's data and options;
    # the stored run keeps the provenance of the call that computed it.
    name = dataset_display_name(dataset.source)
    return _replace(
        result,
        dataset=name,
        provenance=same_call_provenance(meta["provenance"], outcome.run.meta),
        n_computed=outcome.n_computed,
        n_truncated=truncated[0],
        n_cut_at_max_tokens=truncated[1],
        elapsed_s=time.perf_counter() - started,
        notes=notes,
        left_out=left_out,
    )


def same_call_provenance(now: dict[str, Any], stored_meta: dict[str, Any]) -> dict[str, Any]:
    """This call's provenance; the stored one when they differ only in when they were made, so the same
    command gives the same ``--out`` file however often it reads its run back."""
    stored = dict(stored_meta.get("provenance") or {})
    moment = ("created_at",)
    same = stored and {k: v for k, v in stored.items() if k not in moment} == {
        k: v for k, v in now.items() if k not in moment
    }
    return stored if same else dict(now)


def _score_batch(lm, reference_lm, dataset: LabelledDataset, batch: list[int], methods, max_tokens):
    """Score one batch of samples: records, auxiliary passes, every method.

    Returns the store rows, how many texts were cut, and how many of those at ``max_tokens`` (a cut text
    keeps exactly the limit that applied, so one left with ``max_tokens`` tokens was cut there, not by the
    context)."""
    from core.engine.scoring import TruncationWarning, score_texts
    from core.methods.analysis import kgram_needed
    from core.methods.auxiliary import compute_auxiliary

    texts = [dataset.texts[i] for i in batch]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TruncationWarning)
        records = score_texts(lm, texts, kgram_max=kgram_needed(methods), max_tokens=max_tokens)
        aux = compute_auxiliary(lm, texts, methods, records, reference_lm=reference_lm)
    rows = []
    for i, rec, extra in zip(batch, records, aux, strict=True):
        scores = score_all(methods, rec, extra)
        summary = {
            "n_tokens": rec.n_tokens,
            "n_dropped": rec.n_dropped,
            "loss": rec.loss,
            "preview": dataset.texts[i][:PREVIEW_CHARS],
        }
        rows.append(SampleRow(dataset.ids[i], int(dataset.labels[i]), scores, summary))
    cut = [r for r in records if r.n_dropped]
    return rows, len(cut), sum(1 for r in cut if max_tokens is not None and r.n_tokens == max_tokens)


def _label(sample: SampleRow) -> int:
    """A stored sample's label: a benchmark stores one with every sample."""
    if sample.label is None:  # the TypeError int(None) would raise, with the sample named
        raise TypeError(f"Sample {sample.sample_id} has no label.")
    return int(sample.label)


def _evaluate(
    dataset: LabelledDataset, run_id: str, model: str, methods: Sequence[Method], stored: list[SampleRow]
) -> BenchmarkResult:
    by_id = {s.sample_id: s for s in stored}
    missing = [i for i in dataset.ids if i not in by_id]
    if missing:
        raise LeakLensError(f"{len(missing)} samples are missing from run {run_id} after scoring.")
    samples = [by_id[i] for i in dataset.ids]
    labels = [_label(s) for s in samples]
    keys = [m.key for m in methods]
    notes: list[str] = []
    metrics: dict[str, MetricResult | None] = {}
    table: dict[str, list[float]] = {}
    for key in keys:
        column = [score_or_nan(s.scores.get(key)) for s in samples]
        table[key] = column
        metrics[key] = _try_metric(partial(evaluate, labels, column), f"{key}", notes)
    baseline = _try_metric(lambda: blind_baseline(dataset.texts, labels), "blind baseline", notes)
    combined = _try_metric(lambda: ensemble(table, labels), "ensemble", notes)
    by_class = [{t for t, y in zip(dataset.texts, labels, strict=True) if y == c} for c in (0, 1)]
    shared = by_class[0] & by_class[1]
    return BenchmarkResult(
        run_id=run_id,
        dataset=dataset_display_name(dataset.source),
        fingerprint=dataset.fingerprint,
        model=model,
        method_keys=keys,
        method_labels={m.key: m.label for m in methods},
        samples=samples,
        metrics=metrics,
        blind_baseline=baseline,
        ensemble=combined,
        notes=notes,
        n_shared_texts=sum(1 for t in dataset.texts if t in shared),
    )


def _try_metric(compute: Callable[[], MetricResult], what: str, notes: list[str]) -> MetricResult | None:
    try:
        return compute()
    except DataError as exc:
        notes.append(f"{what}: {exc}")
        return None


def _summary(result: BenchmarkResult) -> dict[str, Any]:
    return {
        "dataset": result.dataset,
        "model": result.model,
        "n": result.n,
        "methods": {k: metric_to_store(result.metrics.get(k)) for k in result.method_keys},
        "method_labels": result.method_labels,
        "blind_baseline": metric_to_store(result.blind_baseline),
        "ensemble": metric_to_store(result.ensemble),
        "notes": result.notes,
        "n_shared_texts": result.n_shared_texts,
    }


def metric_to_store(metric: MetricResult | None) -> dict[str, Any] | None:
    if metric is None:
        return None
    return {**metric.to_dict(), "n": metric.n, "n_dropped": metric.n_dropped}


def metric_from_store(data: dict[str, Any] | None) -> MetricResult | None:
    if not data:
        return None
    return MetricResult(
        auroc=float(data["auroc"]),
        ci=(float(data["ci"][0]), float(data["ci"][1])),
        tpr_at_1_fpr=float(data["tpr_at_1_fpr"]),
        tpr_at_5_fpr=float(data["tpr_at_5_fpr"]),
        n=int(data.get("n", 0)),
        n_dropped=int(data.get("n_dropped", 0)),
    )


def result_from_store(
    store: ResultStore, run: RunInfo, *, order: Sequence[str] | None = None, elapsed_s: float = 0.0
) -> BenchmarkResult:
    """Rebuild a finished run's result from the store alone (no model, no dataset needed)."""
    finished_run(run, KIND, "a membership benchmark")
    summary = run.summary
    if summary is None:
        raise LeakLensError(f"Run {run.run_id} was finished without its metrics; run the benchmark again.")
    notes = list(summary.get("notes", []))
    if run.key.get("score_definitions") != SCORE_DEFINITIONS:
        notes.insert(0, OLD_DEFINITIONS_NOTE)
    samples = store.load_samples(run.run_id)
    if order is not None:
        position = {sample_id: i for i, sample_id in enumerate(order)}
        samples.sort(key=lambda s: position.get(s.sample_id, len(position)))
    keys = list(summary.get("methods", {}))
    return BenchmarkResult(
        run_id=run.run_id,
        dataset=str(summary.get("dataset", run.dataset)),
        fingerprint=str(run.key.get("dataset", "")),
        model=str(summary.get("model", run.model)),
        method_keys=keys,
        method_labels={k: summary.get("method_labels", {}).get(k, k) for k in keys},
        samples=samples,
        metrics={k: metric_from_store(v) for k, v in summary["methods"].items()},
        blind_baseline=metric_from_store(summary.get("blind_baseline")),
        ensemble=metric_from_store(summary.get("ensemble")),
        notes=notes,
        elapsed_s=elapsed_s,
        n_shared_texts=summary.get("n_shared_texts"),
        provenance=dict(run.meta.get("provenance") or {}),
    )


def stored_results(store: ResultStore, *, model: str | None = None) -> list[BenchmarkResult]:
    """Every finished membership benchmark run in the store, newest first (optionally one model's)."""
    return [result_from_store(store, r) for r in store.list_runs(KIND, model=model) if r.finished and r.summary]


def _replace(result: BenchmarkResult, **changes: Any) -> BenchmarkResult:
    from dataclasses import replace

    return replace(result, **changes)


def _finite(value: float | None) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return float(value)


def _metric_json(metric: MetricResult | None) -> dict[str, Any] | None:
    if metric is None:
        return None
    return {
        "auroc": metric.auroc,
        "ci": [metric.ci[0], metric.ci[1]],
        "tpr_at_1_fpr": metric.tpr_at_1_fpr,
        "tpr_at_5_fpr": metric.tpr_at_5_fpr,
    }


def latest_per_dataset(results: Sequence[BenchmarkResult]) -> list[BenchmarkResult]:
    """One result per (dataset, model): the first seen, i.e. the newest when ``results`` is newest first.

    Runs of the same data and model with different method sets are alternatives, not columns to repeat.
    """
    seen: set[tuple[str, str]] = set()
    chosen = []
    for result in results:
        pair = (result.fingerprint, result.model)
        if pair not in seen:
            seen.add(pair)
            chosen.append(result)
    return chosen
