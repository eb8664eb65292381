"""Benchmark-order runs in the shared results store (kind ``benchmark-order``), one per model, benchmark
(its rendered examples, in order) and settings.

Each shard is one stored sample: its canonical log-likelihood and every shuffle's, so an interrupted run
resumes shard by shard through the one run loop, and a finished one reopens from the store alone (Results
page, ``python -m core report``): the order patterns found in the file are kept in the run's meta.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.benchmark_order.confounds import OrderPattern, order_patterns
from core.benchmark_order.examples import BenchmarkExamples
from core.benchmark_order.finding import order_finding
from core.benchmark_order.scoring import score_shard
from core.benchmark_order.settings import OrderSettings
from core.benchmark_order.shards import shard_bounds
from core.benchmark_order.statistic import OrderTestResult, ShardResult
from core.engine.handle import ModelHandle
from core.engine.model_source import ScoringModel, encode
from core.engine.progress import ProgressCallback
from core.errors import InputTextError, LeakLensError
from core.stats.finding import Finding
from core.store.results import ResultStore, RunInfo, SampleRow
from core.store.runloop import RunRequest
from core.store.stored_run import LoadOnce, finished_run, run_meta, run_stored

KIND = "benchmark-order"
MIN_EXAMPLES_PER_SHARD = 2
"""A shard of one example has one order: nothing to compare."""


@dataclass(frozen=True)
class OrderTest:
    """One run: what was tested, the numbers and the verdict."""

    benchmark: str
    model: str
    template: str
    result: OrderTestResult
    patterns: tuple[OrderPattern, ...]
    finding: Finding
    run_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The ``--out`` document (the CLI adds provenance)."""
        return {
            "finding": self.finding.to_dict(),
            "benchmark": self.benchmark,
            "model": self.model,
            "text_template": self.template,
            "order_patterns": [pattern.reason() for pattern in self.patterns],
            "run_id": self.run_id,
            **self.result.to_dict(),
        }


def most_shards(n_examples: int) -> int:
    """The most shards ``n_examples`` can fill (``check_shardable`` refuses more)."""
    return n_examples // MIN_EXAMPLES_PER_SHARD


def check_shardable(n_examples: int, settings: OrderSettings) -> None:
    """Refuse, before any work, a benchmark too small for the shards asked for."""
    fits = most_shards(n_examples)
    if settings.shards > fits:
        raise InputTextError(
            f"{n_examples} examples cannot fill {settings.shards} shards of at least {MIN_EXAMPLES_PER_SHARD}; "
            f"use --shards {fits} or fewer."
            if fits >= 2
            else f"{n_examples} examples are too few for the order test."
        )


def order_run_key(model: ModelHandle, examples: BenchmarkExamples, settings: OrderSettings) -> dict[str, Any]:
    return {
        **model.key,
        "examples": examples.fingerprint,
        "shards": settings.shards,
        "permutations": settings.permutations,
        "seed": settings.seed,
        "context": settings.context,
        "stride": settings.stride,
    }


def _shard_row(shard: ShardResult, window: tuple[int, int]) -> SampleRow:
    return SampleRow(
        sample_id=str(shard.index),
        label=None,
        scores={"canonical": shard.canonical, "difference": shard.difference},
        summary={
            "start": shard.start,
            "stop": shard.stop,
            "shuffled": list(shard.shuffled),
            "exhaustive": shard.exhaustive,
            "n_tokens": shard.n_tokens,
            "window": list(window),
        },
    )


def _shard_from_row(row: SampleRow) -> ShardResult:
    s = row.summary
    return ShardResult(
        index=int(row.sample_id),
        start=int(s["start"]),
        stop=int(s["stop"]),
        canonical=float(row.scores["canonical"] or 0.0),
        shuffled=tuple(float(v) for v in s["shuffled"]),
        exhaustive=bool(s["exhaustive"]),
        n_tokens=int(s["n_tokens"]),
    )


def _result(samples: Sequence[SampleRow], n_examples: int, settings: OrderSettings) -> OrderTestResult:
    """The test over stored shards; the window (context, stride) the shards were scored with is kept by each."""
    shards = tuple(sorted((_shard_from_row(s) for s in samples), key=lambda shard: shard.index))
    context, stride = (int(v) for v in samples[0].summary["window"])
    return OrderTestResult(shards, n_examples, settings.permutations, context, stride, settings.seed)


def run_order_test(
    examples: BenchmarkExamples,
    settings: OrderSettings,
    *,
    model: ModelHandle,
    store: ResultStore,
    batch_size: int = 1,
    progress: ProgressCallback | None = None,
    provenance: Mapping[str, Any] | None = None,
) -> OrderTest:
    """Score every shard (resuming from the store), test, and keep the finished run so it can be reopened.

    ``progress`` counts shards; ``batch_size`` shards are scored and stored together.
    """
    check_shardable(len(examples), settings)
    bounds = shard_bounds(len(examples), settings.shards)
    patterns = tuple(order_patterns(examples.rows, examples.texts, bounds, examples.fields))
    lm = LoadOnce(model.load)
    token_ids = LoadOnce(lambda: [encode(lm(), text) for text in examples.texts])

    def score(model_: ScoringModel, positions: list[int]) -> list[SampleRow]:
        ids, window = token_ids(), settings.window(model_.max_context)
        return [_shard_row(score_shard(model_, ids, i, bounds[i], settings), window) for i in positions]

    def summarise(samples: list[SampleRow]) -> dict[str, Any]:
        result = _result(samples, len(examples), settings)
        return {"p_value": result.p_value, "n_shards": len(samples)}

    key = order_run_key(model, examples, settings)
    meta = run_meta(
        dataset=examples.name,
        model=model.spec,
        n_total=settings.shards,
        task="benchmark-order",
        provenance=provenance,
        n_examples=len(examples),
        template=examples.template,
        patterns=[_pattern_json(p) for p in patterns],
    )

    outcome = run_stored(
        store,
        RunRequest(KIND, key, meta, model.setup.to_dict()),
        [str(i) for i in range(settings.shards)],
        load=lm,
        score=score,
        summarise=summarise,
        batch_size=batch_size,
        progress=progress,
    )
    result = _result(outcome.samples, len(examples), settings)
    finding = order_finding(result, examples.name, patterns)
    return OrderTest(examples.name, model.spec, examples.template, result, patterns, finding, outcome.run.run_id)


def _pattern_json(pattern: OrderPattern) -> dict[str, Any]:
    return {"what": pattern.what, "ascending": pattern.ascending, "descending": pattern.descending}


def order_test_from_run(store: ResultStore, run: RunInfo) -> OrderTest:
    """A finished benchmark-order run from the store alone: no model, no benchmark file."""
    finished_run(run, KIND, "a benchmark-order run")
    try:
        key, meta = run.key, run.meta
        settings = OrderSettings(
            shards=int(key["shards"]),
            permutations=int(key["permutations"]),
            seed=int(key["seed"]),
            context=key.get("context"),
            stride=key.get("stride"),
        )
        patterns = tuple(OrderPattern(p["what"], int(p["ascending"]), int(p["descending"])) for p in meta["patterns"])
        result = _result(store.load_samples(run.run_id), int(meta["n_examples"]), settings)
        name = str(meta["dataset"])
    except (KeyError, TypeError, ValueError) as exc:
        raise LeakLensError(f"The benchmark-order run {run.run_id} in the store is incomplete ({exc!r}).") from exc
    finding = order_finding(result, name, patterns)
    return OrderTest(
        name, str(meta.get("model") or run.model), str(meta["template"]), result, patterns, finding, run.run_id
    )
