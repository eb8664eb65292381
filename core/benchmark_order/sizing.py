"""How many shards a benchmark fits: the most it can fill, and the count a front end suggests for it.

Every shard needs at least two examples (``run.MIN_EXAMPLES_PER_SHARD``), but a shard of two has a single
other order and one of three only five, so their comparisons are coarse. Shards of four have 23 other orders:
a benchmark too small for the default shard count is given as many shards of four as it fills (measured: a
model fine-tuned on a 120-question file in order reads p 0.018 with 50 shards of 2-3, about 1e-4 with 30 of 4).
"""

from __future__ import annotations

from core.benchmark_order.run import most_shards
from core.benchmark_order.settings import DEFAULT_SHARDS, SUGGESTED_EXAMPLES_PER_SHARD


def suggested_shards(n_examples: int, wanted: int = DEFAULT_SHARDS) -> int:
    """``wanted``, or as many shards of four examples as the benchmark fills when that is fewer (never under
    two shards while the benchmark can fill two)."""
    return min(wanted, max(n_examples // SUGGESTED_EXAMPLES_PER_SHARD, min(2, most_shards(n_examples))))
