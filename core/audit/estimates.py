"""Expected time of each planned test, before any model is loaded: the work each test does (tokens through the
model, continuations to generate) at the rates the bundled 135M model reaches on a 2-core CPU (measured by
``bench/audit.py``; ``bench/results/audit-*.json``). A larger model or a busier machine takes longer, a GPU far
less: a plan's times say which test dominates and roughly how long the audit will take, not a promise. Once a test
runs, its progress bar's time left comes from its own measured rate (``core.engine.progress.TimeLeft``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from core.audit.extraction import SAMPLE
from core.audit.plan import EXTRACTION, INFERENCE, LOSS_DELTA, MCQ, OPTION_ORDER, ORDER, OVERLAP, AuditPlan
from core.data.tables import Table
from core.engine.handle import ModelHandle

FORWARD_TOKENS_PER_S = 566.0
"""Tokens per second through the bundled model's forward pass, 2-core AMD EPYC (bench/results/tour-*.json)."""
CHARS_PER_TOKEN = 3.6
"""English benchmark text, SmolLM2's tokenizer: about 3.6 characters per token."""
LOAD_S = 20.0
"""Loading the bundled model (its first load dequantises it once)."""
ORDER_SHARING = 0.5
"""The orders of one shard share their start: the order test runs about half the tokens its orders hold
(bench/results/audit-20261129T132828Z.json: 18 s for demo:mcq's 6 shards, 36 s by tokens alone)."""
MCQ_S_PER_QUESTION = 0.9
"""Published and shuffled probes of one four-option question (same bench: 24 questions with their orders, 29 s)."""
ORDERS_S_PER_QUESTION = 0.3
"""Every order of one question's options (24 for four), scored with the question text's cache reused."""
EXTRACTION_S_PER_ITEM = 0.15
"""One item's continuation (up to 64 tokens, batched with the others; same bench: 24 items, 3 s)."""
FRESH_S = 90.0
"""Fresh passages of the items' lengths, scored once per model (none for the bundled model: they ship)."""
OVERLAP_S = 5.0


def _tokens(table: Table) -> float:
    chars = sum(len(" ".join(str(v) for v in row.values())) for row in table.rows)
    return chars / CHARS_PER_TOKEN


def _order_s(table: Table) -> float:
    from core.benchmark_order.settings import DEFAULT_PERMUTATIONS
    from core.benchmark_order.shards import shard_bounds
    from core.benchmark_order.sizing import suggested_shards

    n = len(table.rows)
    shards = max(2, suggested_shards(n))
    per_example = _tokens(table) / max(n, 1)
    total = 0.0
    for start, stop in shard_bounds(n, shards):
        size = stop - start
        orders = min(DEFAULT_PERMUTATIONS, math.factorial(size) - 1) + 1
        total += orders * size * per_example
    return ORDER_SHARING * total / FORWARD_TOKENS_PER_S


def _fresh_s(model: ModelHandle) -> float:
    from core.passage.shipped_calibration import shipped_path

    shipped = model.kind == "bundled" and "/" not in model.spec and shipped_path(model.spec).is_file()
    return 0.0 if shipped else FRESH_S


ESTIMATES: dict[str, Callable[[Table, ModelHandle], float]] = {
    ORDER.key: lambda table, model: _order_s(table),
    MCQ.key: lambda table, model: MCQ_S_PER_QUESTION * len(table.rows),
    OPTION_ORDER.key: lambda table, model: ORDERS_S_PER_QUESTION * len(table.rows),
    EXTRACTION.key: lambda table, model: EXTRACTION_S_PER_ITEM * min(SAMPLE, len(table.rows)) + _fresh_s(model),
    LOSS_DELTA.key: lambda table, model: 2 * _tokens(table) / FORWARD_TOKENS_PER_S,
    INFERENCE.key: lambda table, model: 2.0 * len(table.rows),
    OVERLAP.key: lambda table, model: OVERLAP_S,
}
"""Seconds per test on the bundled model (the first test to run also pays ``LOAD_S``)."""


def plan_with_estimates(plan: AuditPlan, model: ModelHandle, table: Table) -> AuditPlan:
    """The plan with each test's expected seconds; the first test that runs carries the model's load."""
    seconds = {part.key: ESTIMATES[part.key](table, model) for part in plan.to_run}
    if plan.to_run:
        seconds[plan.to_run[0].key] += LOAD_S
    return plan.with_estimates(seconds)
