"""One audit: every test the plan runs, in its order, each as the stored run its own page would make (read back
when it exists), then one combined verdict (``core.audit.combine``), kept as a run of kind ``audit`` that names
its parts' runs.

An audit resumes by construction: every part resumes from the store batch by batch, and a finished part is read
back without the model, so running the same audit again after a cancel redoes only what was not stored. The
extraction over sampled items (``core.audit.extraction``) has no run of its own; its readings are kept in the
audit's summary.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.audit.combine import DEFAULT_ALPHA, CombinedVerdict, PartResult, combine_parts
from core.audit.extraction import ItemsExtraction, items_extraction
from core.audit.plan import (
    EXTRACTION,
    INFERENCE,
    LOSS_DELTA,
    MCQ,
    OPTION_ORDER,
    ORDER,
    OVERLAP,
    AuditPlan,
    EvidenceSources,
    plan_audit,
)
from core.data.fingerprint import fingerprint_rows
from core.data.questions import MCQColumns
from core.data.tables import Table
from core.engine.handle import ModelHandle
from core.engine.progress import ProgressCallback
from core.errors import DataError, LeakLensError
from core.stats.finding import Finding
from core.store.results import ResultStore, RunInfo
from core.store.stored_run import finished_run

KIND = "audit"
"""Store kind of a finished audit."""
FORMAT = 1
"""Part of the run key: raised when the stored summary's layout changes."""
AuditProgress = Callable[[str], ProgressCallback | None]
"""``progress(label)`` at the start of each step ("Benchmark order (1 of 3)"), giving that step's callback."""


@dataclass(frozen=True)
class AuditPart:
    """One test the audit ran: its finding, the p-value its test gives, and the stored run that holds it."""

    key: str
    finding: Finding
    p_value: float | None
    run_id: str | None = None
    """The stored run holding the part (the MCQ run holds both multiple-choice parts); None: kept in the audit."""
    run_kind: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    """What a part without a run of its own keeps (the sampled items' extraction readings)."""

    @property
    def result(self) -> PartResult:
        return PartResult(self.key, self.finding, self.p_value)

    def to_dict(self) -> dict[str, Any]:
        return {
            "test": self.key,
            "finding": self.finding.to_dict(),
            "p_value": self.p_value,
            "run_id": self.run_id,
            "run_kind": self.run_kind,
            "detail": self.detail,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AuditPart:
        p = data.get("p_value")
        return cls(
            str(data["test"]),
            Finding.from_dict(data["finding"]),
            None if p is None else float(p),
            data.get("run_id"),
            data.get("run_kind"),
            dict(data.get("detail") or {}),
        )


@dataclass(frozen=True)
class Audit:
    """The audit of one model on one benchmark: the plan, each part, and the verdict they combine into."""

    benchmark: str
    model: str
    plan: AuditPlan
    parts: tuple[AuditPart, ...]
    verdict: CombinedVerdict
    run_id: str = ""
    elapsed_s: float = 0.0

    @property
    def finding(self) -> Finding:
        return self.verdict.finding()

    def part(self, key: str) -> AuditPart:
        for part in self.parts:
            if part.key == key:
                return part
        raise KeyError(f"The audit ran no test {key!r}.")

    @property
    def items_extraction(self) -> ItemsExtraction | None:
        detail = next((p.detail for p in self.parts if p.key == EXTRACTION.key and p.detail), None)
        return ItemsExtraction.from_dict(detail) if detail else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "benchmark": self.benchmark,
            "model": self.model,
            "finding": self.finding.to_dict(),
            "alpha": self.verdict.alpha,
            "parts": [
                {**part.to_dict(), "adjusted_p_value": self.verdict.adjusted.get(part.key)} for part in self.parts
            ],
            "survivors": list(self.verdict.survivors),
            "strongest": self.verdict.strongest,
            "plan": self.plan.to_dict(),
            "run_id": self.run_id,
        }


@dataclass(frozen=True)
class _Context:
    table: Table
    model: ModelHandle
    sources: EvidenceSources
    store: ResultStore
    plan: AuditPlan
    columns: MCQColumns
    template: str | None
    overlap_backend: Any


def table_fingerprint(table: Table) -> str:
    """The benchmark's rows in order: the same file, however named or uploaded, is the same benchmark."""
    return fingerprint_rows(json.dumps(row, sort_keys=True, ensure_ascii=False, default=str) for row in table.rows)


def run_audit(
    table: Table,
    model: ModelHandle,
    *,
    sources: EvidenceSources | None = None,
    store: ResultStore | None = None,
    columns: MCQColumns | None = None,
    plan: AuditPlan | None = None,
    progress: AuditProgress | None = None,
    alpha: float = DEFAULT_ALPHA,
    template: str | None = None,
    overlap_backend: Any = None,
) -> Audit:
    """Run every test ``plan`` (default: ``plan_audit``) runs on ``table`` under ``model``, combine, and store.

    ``progress(label)`` is called as each step starts and returns that step's ``(done, total)`` callback (or
    None); a callback may raise to cancel, and every batch finished before that stays stored. ``template`` is how
    one item reads for the order test and the extraction (default: every column but a row id, joined by spaces).
    ``overlap_backend`` holds the index overlap searches (default: the embedded indexes in LeakLens's cache)."""
    started = time.perf_counter()
    sources = sources or EvidenceSources()
    store = store or ResultStore()
    columns = columns or MCQColumns()
    plan = plan or plan_audit(table, sources, mcq_columns=columns)
    if not plan.to_run:
        raise DataError("No test applies to this benchmark. " + " ".join(p.why_not + "." for p in plan.left_out))
    context = _Context(table, model, sources, store, plan, columns, template, overlap_backend)
    steps = [step for step in STEPS if plan.part(step.first).applies]
    parts: list[AuditPart] = []
    say: AuditProgress = progress or (lambda _label: None)
    for number, step in enumerate(steps, 1):
        label = f"{plan.part(step.first).title} ({number} of {len(steps)})"
        try:
            parts.extend(
                step.run(context, lambda stage="", label=label: say(f"{label}{': ' + stage if stage else ''}"))
            )
        except LeakLensError as exc:  # the others still run; this one is named as not read, never dropped
            parts.extend(_not_run(plan, step, exc))
    verdict = combine_parts([p.result for p in parts], alpha)
    audit = Audit(plan.benchmark, model.spec, plan, tuple(parts), verdict, elapsed_s=time.perf_counter() - started)
    run = _store(store, audit, model, table, template)
    return Audit(audit.benchmark, audit.model, plan, audit.parts, verdict, run.run_id, audit.elapsed_s)


def _store(store: ResultStore, audit: Audit, model: ModelHandle, table: Table, template: str | None) -> RunInfo:
    key = {
        **model.key,
        "benchmark": table_fingerprint(table),
        "part_runs": {p.key: p.run_id for p in audit.parts if p.run_id},
        "alpha": audit.verdict.alpha,
        "template": template,
        "format": FORMAT,
    }
    meta = {"dataset": audit.benchmark, "model": audit.model, "n_total": len(audit.parts)}
    run = store.get_or_create_run(KIND, key, meta)
    if run.finished:
        return run
    return store.finish_run(run.run_id, audit.to_dict())


def audit_from_run(store: ResultStore, run: RunInfo) -> Audit:
    """A finished audit from the store alone: its parts' findings and p-values, combined again by the same rule."""
    finished_run(run, KIND, "an audit")
    try:
        summary = run.summary or {}
        parts = tuple(AuditPart.from_dict(p) for p in summary["parts"])
        plan = AuditPlan.from_dict(summary["plan"])
        alpha = float(summary.get("alpha", DEFAULT_ALPHA))
    except (KeyError, TypeError, ValueError) as exc:
        raise LeakLensError(f"Stored audit {run.run_id} cannot be read ({exc}); run the audit again.") from exc
    verdict = combine_parts([p.result for p in parts], alpha)
    return Audit(str(summary.get("benchmark") or run.meta.get("dataset")), run.model, plan, parts, verdict, run.run_id)


def _not_run(plan: AuditPlan, step: _Step, exc: LeakLensError) -> list[AuditPart]:
    keys = [step.first] + ([OPTION_ORDER.key] if step.first == MCQ.key and plan.part(OPTION_ORDER.key).applies else [])
    return [
        AuditPart(key, Finding("inconclusive", f"{plan.part(key).title} could not run: {exc}", (str(exc),)), None)
        for key in keys
    ]


# -- the steps -------------------------------------------------------------------------------------------------
StepProgress = Callable[..., ProgressCallback | None]


@dataclass(frozen=True)
class _Step:
    first: str
    """The plan key that decides whether the step runs (the MCQ step also gives the option-order part)."""
    run: Callable[[_Context, StepProgress], list[AuditPart]]


def _finite(p: float | None) -> float | None:
    return p if p is not None and math.isfinite(p) else None


def _order(ctx: _Context, progress: StepProgress) -> list[AuditPart]:
    from core.benchmark_order.examples import render_examples
    from core.benchmark_order.run import KIND as ORDER_KIND
    from core.benchmark_order.run import run_order_test
    from core.benchmark_order.settings import OrderSettings
    from core.benchmark_order.sizing import suggested_shards

    examples = render_examples(ctx.table, ctx.template)
    settings = OrderSettings(shards=max(2, suggested_shards(len(examples))))
    test = run_order_test(examples, settings, model=ctx.model, store=ctx.store, progress=progress())
    return [AuditPart(ORDER.key, test.finding, _finite(test.result.p_value), test.run_id, ORDER_KIND)]


def _mcq(ctx: _Context, progress: StepProgress) -> list[AuditPart]:
    from core.data.questions import questions_from_table
    from core.mcq.completion import MCQConfig
    from core.mcq.finding import drop_p_value, mcq_finding, option_order_finding
    from core.mcq.stored import KIND as MCQ_KIND
    from core.mcq.stored import run_stored_benchmark

    dataset = questions_from_table(ctx.table, columns=ctx.columns)
    orders = ctx.plan.part(OPTION_ORDER.key).applies
    report, run, _ = run_stored_benchmark(
        dataset.questions,
        MCQConfig(),
        model=ctx.model,
        store=ctx.store,
        benchmark=ctx.plan.benchmark,
        permutation=orders,
        progress=progress(),
    )
    parts = [AuditPart(MCQ.key, mcq_finding(report), drop_p_value(report), run.run_id, MCQ_KIND)]
    if orders and report.permutation is not None:
        p = report.permutation.p_value_top1
        parts.append(AuditPart(OPTION_ORDER.key, option_order_finding(report.permutation), p, run.run_id, MCQ_KIND))
    return parts


def _extraction(ctx: _Context, progress: StepProgress) -> list[AuditPart]:
    from core.benchmark_order.examples import render_examples

    texts = render_examples(ctx.table, ctx.template).texts
    stages = {"fresh": "freshly written passages, scored once for this model", "items": "continuing the items"}
    result = items_extraction(ctx.model, texts, store=ctx.store, progress=lambda stage: progress(stages[stage]))
    return [AuditPart(EXTRACTION.key, result.finding, result.p_value, detail=result.to_dict())]


def _loss_delta(ctx: _Context, progress: StepProgress) -> list[AuditPart]:
    from core.data.problems import load_problem_set, problems_from_table
    from core.loss_delta.comparison import COMPARISON_KIND
    from core.loss_delta.delta import ModelRequest
    from core.loss_delta.finding import leakage_finding
    from core.loss_delta.run import run_leakage_test

    reference = ctx.sources.reference
    assert reference is not None  # the plan runs loss delta only with one
    report = run_leakage_test(
        problems_from_table(ctx.table),
        load_problem_set(reference),
        [ModelRequest(ctx.model.spec, ctx.sources.base_model)],
        model=ctx.model,
        store=ctx.store,
        progress=progress(),
    )
    row = report.models[0]
    # Δ² (against a base model) has a bootstrap interval but no test: not combinable, shown as it reads.
    p = row.stats.p_easier if row.base_model is None else None
    return [AuditPart(LOSS_DELTA.key, leakage_finding(report), p, report.run_id or None, COMPARISON_KIND)]


def _inference(ctx: _Context, progress: StepProgress) -> list[AuditPart]:
    from core.data.text_sets import load_text_set, text_set_from_table
    from core.dataset_inference.run import KIND as INFERENCE_KIND
    from core.dataset_inference.run import run_dataset_inference

    validation = ctx.sources.validation
    assert validation is not None  # the plan runs dataset inference only with one
    inference = run_dataset_inference(
        text_set_from_table(ctx.table), load_text_set(validation), ctx.model, store=ctx.store, progress=progress()
    )
    p = _finite(inference.result.p_value)
    return [AuditPart(INFERENCE.key, inference.finding, p, inference.run_id or None, INFERENCE_KIND)]


def _overlap(ctx: _Context, progress: StepProgress) -> list[AuditPart]:
    from core.overlap.backends import get_backend
    from core.overlap.finding import overlap_finding
    from core.overlap.matching import search
    from core.overlap.report import build_contamination_report
    from core.overlap.sources import eval_set_from_table

    index = ctx.sources.index
    assert index is not None  # the plan runs overlap only with an index
    test_set = eval_set_from_table(ctx.table, None, name=ctx.plan.benchmark)
    backend = ctx.overlap_backend or get_backend("embedded")
    matches = search(backend, [index], [test_set], progress=progress())
    report = build_contamination_report(matches)
    # A match is a fact, not a test: overlap is shown and never counted in the combination.
    return [AuditPart(OVERLAP.key, overlap_finding(report), None)]


STEPS: tuple[_Step, ...] = (
    _Step(ORDER.key, _order),
    _Step(MCQ.key, _mcq),
    _Step(EXTRACTION.key, _extraction),
    _Step(LOSS_DELTA.key, _loss_delta),
    _Step(INFERENCE.key, _inference),
    _Step(OVERLAP.key, _overlap),
)
"""What runs each planned test, in the plan's order; the MCQ step gives the option-order part as well."""
