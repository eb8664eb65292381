"""How many shards a benchmark fits: the most it can fill, and the count a front end suggests for it.

Every shard needs at least two examples (``run.MIN_EXAMPLES_PER_SHARD``), but a shard of two has a single
other order, so its comparison rests on one shuffle. From three examples on a shard has five shuffles or
more, so a benchmark too small for the default shard count is offered as many shards of three as it fills.
"""

from __future__ import annotations

from core.benchmark_order.run import most_shards
from core.benchmark_order.settings import DEFAULT_SHARDS

SUGGESTED_EXAMPLES_PER_SHARD = 3
"""The fewest examples per shard a suggested count gives each shard (six orders to compare)."""


def suggested_shards(n_examples: int, wanted: int = DEFAULT_SHARDS) -> int:
    """``wanted``, or as many shards of three examples as the benchmark fills when that is fewer (never under
    two shards while the benchmark can fill two)."""
    return min(wanted, max(n_examples // SUGGESTED_EXAMPLES_PER_SHARD, min(2, most_shards(n_examples))))
