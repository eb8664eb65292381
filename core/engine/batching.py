"""Length-bucketed batching: the one way LeakLens groups sequences for a padded forward pass.

Longest first, so each batch's width is its first row's length and padding stays small; a batch grows
while ``width × rows`` fits the token budget (and, optionally, a row cap).
"""

from __future__ import annotations

from collections.abc import Sequence


def length_batches(lengths: Sequence[int], token_budget: int, *, max_rows: int | None = None) -> list[list[int]]:
    """Indices grouped longest-first so each padded batch stays within ``token_budget`` tokens.

    A sequence longer than the budget still gets a batch of its own: the budget bounds padding, not
    what may be scored.
    """
    if token_budget < 1:
        raise ValueError("token_budget must be positive.")
    if max_rows is not None and max_rows < 1:
        raise ValueError("max_rows must be positive.")
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches: list[list[int]] = []
    current: list[int] = []
    for index in order:
        width = lengths[current[0]] if current else lengths[index]
        full = max_rows is not None and len(current) >= max_rows
        if current and (full or width * (len(current) + 1) > token_budget):
            batches.append(current)
            current = []
        current.append(index)
    if current:
        batches.append(current)
    return batches


def split_by_extent(batch: Sequence[int], extents: Sequence[int], budget: int) -> list[list[int]]:
    """``batch`` split, widest extent first, so each part's rows × widest extent fits ``budget``.

    For batches formed on one length (tokens to run, steps to decode) whose memory also grows with a
    second one (keys and values already cached): the first keeps padding small, this bounds the memory.
    The same grouping as ``length_batches``, over ``extents`` of the batch's rows: a row wider than the
    budget still gets a part of its own.
    """
    rows = list(batch)
    return [[rows[i] for i in part] for part in length_batches([extents[i] for i in rows], budget)]
