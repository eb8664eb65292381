"""The test's settings, checked once where they are made."""

from __future__ import annotations

from dataclasses import dataclass

from core.errors import InputTextError

DEFAULT_SHARDS = 50
SUGGESTED_EXAMPLES_PER_SHARD = 4
"""The fewest examples per shard a default count gives each shard (24 orders to compare): ``sizing``."""
DEFAULT_PERMUTATIONS = 250
MAX_PERMUTATIONS = 10_000
"""Shuffled orders per shard at most: the t-test reads only their mean, which 10,000 draws pin far below the
spread between shards; more would only multiply the passes (12 examples have 479 million orders)."""
DEFAULT_CONTEXT = 2048
"""Tokens per model pass (or the model's own context when smaller), as in the published test."""


@dataclass(frozen=True)
class OrderSettings:
    shards: int = DEFAULT_SHARDS
    """Runs of consecutive examples, each one data point of the t-test."""
    permutations: int = DEFAULT_PERMUTATIONS
    """Shuffled orders scored per shard (every order when a shard has fewer)."""
    seed: int = 0
    """Seed of the shuffles (each shard draws from its own stream, so a resumed run draws the same)."""
    context: int | None = None
    """Tokens per pass over a long shard; None: the smaller of 2,048 and the model's context."""
    stride: int | None = None
    """Tokens between windows over a long shard; None: half the context."""

    def __post_init__(self) -> None:
        if self.shards < 2:
            raise InputTextError("The order test needs at least 2 shards (--shards).")
        if self.permutations < 1:
            raise InputTextError("The order test needs at least 1 shuffled order per shard (--permutations).")
        if self.permutations > MAX_PERMUTATIONS:
            raise InputTextError(
                f"--permutations {self.permutations:,} is above the cap of {MAX_PERMUTATIONS:,} shuffles per shard: "
                "the test reads only the shuffles' mean, which that many pin down; more would only multiply the "
                "model passes."
            )
        if self.context is not None and self.context < 8:
            raise InputTextError("The context (--context) must be at least 8 tokens.")
        if self.stride is not None and self.stride < 1:
            raise InputTextError("The stride (--stride) must be positive.")

    def window(self, model_context: int) -> tuple[int, int]:
        """(context, stride) for a model whose context holds ``model_context`` tokens."""
        context = min(self.context or DEFAULT_CONTEXT, model_context)
        stride = self.stride or context // 2
        if stride >= context:
            raise InputTextError(f"The stride ({stride}) must be below the context ({context} tokens).")
        return context, stride
