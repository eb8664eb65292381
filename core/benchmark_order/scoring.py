"""The log-likelihood of one shard's examples in each of several orders.

Each example is tokenized on its own, so every order is a rearrangement of the same tokens and only the
order differs. Orders that begin with the same example share their start: a group of them runs it once (the
shared-prefix path of ``core.engine.generation``), the rest are batched together. A sequence longer than the
context is read in sliding windows (``shards.windows``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from core.benchmark_order.settings import OrderSettings
from core.benchmark_order.shards import Order, shard_orders, windows
from core.benchmark_order.statistic import ShardResult
from core.engine.generation import sequence_logprobs, sequence_logprobs_shared_prefix
from core.engine.model_source import ScoringModel

MIN_SHARED_GROUP = 4
"""Orders that share their first example run its start once only when at least this many do: a smaller group
saves less than the extra pass it costs (measured: docs/benchmarks.md, Benchmark order test)."""


def order_sequence(start_id: int, examples: Sequence[Sequence[int]], order: Order) -> list[int]:
    """The start token, then the examples' ids in ``order``."""
    return [start_id, *(token for index in order for token in examples[index])]


def order_logprobs(
    lm: ScoringModel,
    examples: Sequence[Sequence[int]],
    orders: Sequence[Order],
    *,
    context: int,
    stride: int,
) -> list[float]:
    """Total log-probability of the examples' tokens in each order (after the start token)."""
    sequences = [order_sequence(lm.start_token_id, examples, order) for order in orders]
    totals = [0.0] * len(sequences)
    later: list[tuple[int, list[int], int]] = []  # (order, window tokens, first counted position in it)
    first_windows: dict[int, list[tuple[int, list[int]]]] = defaultdict(list)
    for index, (order, seq) in enumerate(zip(orders, sequences, strict=True)):
        spans = windows(len(seq), context, stride)
        first_windows[order[0]].append((index, seq[: spans[0].stop]))
        later.extend((index, seq[w.start : w.stop], w.scored_from - w.start) for w in spans[1:])
    alone: list[tuple[int, list[int]]] = []
    for group in first_windows.values():
        if len(group) < MIN_SHARED_GROUP:
            alone.extend(group)
            continue
        for (index, _), total in zip(
            group, sequence_logprobs_shared_prefix(lm, [seq for _, seq in group]), strict=True
        ):
            totals[index] += total
    if alone:
        for (index, _), total in zip(alone, sequence_logprobs(lm, [seq for _, seq in alone]), strict=True):
            totals[index] += total
    if later:
        window_totals = sequence_logprobs(lm, [seq for _, seq, _ in later], scored_from=[f for _, _, f in later])
        for (index, _, _), total in zip(later, window_totals, strict=True):
            totals[index] += total
    return totals


def score_shard(
    lm: ScoringModel,
    examples: Sequence[Sequence[int]],
    index: int,
    bounds: tuple[int, int],
    settings: OrderSettings,
) -> ShardResult:
    """Score shard ``index`` (examples ``bounds[0]`` to ``bounds[1] - 1``) in its canonical and shuffled orders."""
    start, stop = bounds
    members = list(examples[start:stop])
    drawn = shard_orders(len(members), settings.permutations, settings.seed, index)
    context, stride = settings.window(lm.max_context)
    canonical = tuple(range(len(members)))
    totals = order_logprobs(lm, members, [canonical, *drawn.shuffled], context=context, stride=stride)
    return ShardResult(
        index=index,
        start=start,
        stop=stop,
        canonical=totals[0],
        shuffled=tuple(totals[1:]),
        exhaustive=drawn.exhaustive,
        n_tokens=sum(len(m) for m in members),
    )
