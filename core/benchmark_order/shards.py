"""Which examples form each shard, which orders of them are scored, and how a long sequence is windowed.

Shards are runs of consecutive examples, as equal in size as the count allows (the first ``n mod shards``
get one more), so each shard keeps the published file's local order. A shard whose examples have at most
``permutations + 1`` orders in all is scored in every order (the exact distribution, and fewer passes);
otherwise ``permutations`` random orders are drawn, seeded per shard so a resumed run draws the same ones.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

Order = tuple[int, ...]


def shard_bounds(n_examples: int, n_shards: int) -> list[tuple[int, int]]:
    """(start, stop) of each shard over ``n_examples`` consecutive examples."""
    if n_shards < 1 or n_examples < n_shards:
        raise ValueError(f"{n_examples} examples cannot fill {n_shards} shards.")
    base, extra = divmod(n_examples, n_shards)
    bounds, start = [], 0
    for index in range(n_shards):
        stop = start + base + (1 if index < extra else 0)
        bounds.append((start, stop))
        start = stop
    return bounds


@dataclass(frozen=True)
class ShardOrders:
    """The shuffled orders of one shard (the canonical order 0..k-1 is scored besides them)."""

    shuffled: tuple[Order, ...]
    exhaustive: bool
    """True: ``shuffled`` is every order but the canonical one, so the shard's p-value is exact."""


def shard_orders(size: int, permutations: int, seed: int, shard_index: int) -> ShardOrders:
    """Every other order of a small shard, or ``permutations`` seeded random orders of a large one."""
    canonical = tuple(range(size))
    if math.factorial(size) - 1 <= permutations:
        others = tuple(order for order in _all_orders(size) if order != canonical)
        return ShardOrders(others, exhaustive=True)
    rng = np.random.default_rng([seed, shard_index])
    return ShardOrders(tuple(tuple(int(i) for i in rng.permutation(size)) for _ in range(permutations)), False)


def _all_orders(size: int) -> list[Order]:
    from itertools import permutations

    return list(permutations(range(size)))


@dataclass(frozen=True)
class Window:
    """One model pass over ``tokens[start:stop]``, counting the tokens from ``scored_from`` (absolute) on."""

    start: int
    stop: int
    scored_from: int


def windows(length: int, context: int, stride: int) -> list[Window]:
    """Sliding windows of at most ``context`` tokens, ``stride`` apart, over a sequence of ``length`` tokens.

    Every token after the first is counted exactly once, in the first window that predicts it, so each
    one is read with at least ``context - stride`` tokens before it once the first window is full. A
    sequence that fits the context is one window.
    """
    if not 0 < stride <= context - 1:
        raise ValueError(f"The stride ({stride}) must be positive and below the context ({context}).")
    count = 1 + math.ceil(max(0, length - context) / stride)
    found = []
    for j in range(count):
        start = stride * j
        stop = min(start + context, length)
        scored_from = 1 if j == 0 else stride * (j - 1) + context
        found.append(Window(start, stop, scored_from))
    return found
