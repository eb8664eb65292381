"""The scoring pass on a served model: the same per-token quantities as the in-process pass, asked of the
server as prompt log-probs of token-id prompts (``core.engine.served``).

The passage pass sends ``start + prefix + passage`` and keeps the passage's log-probs and ranks. The
k-gram pass sends the same windows the in-process pass runs (``[start, x_j .. x_{j+K-1}]``: position m of
the window predicts x_{j+m} from exactly m previous tokens). The full next-token distribution is not
returned by any OpenAI-compatible API, so its statistics are NaN and Min-K%++ is left out for served models.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from core.engine.progress import ProgressCallback
from core.engine.records import windows_to_grid
from core.engine.served import ServedModel

SERVED_TOKEN_BUDGET = 65_536
"""Tokens per scoring batch on a served model: the server batches internally and requests run
``--concurrency`` at a time, so large batches keep it busy (progress moves per batch)."""


def served_full_pass(
    model: ServedModel, sequences: Sequence[tuple[Sequence[int], Sequence[int]]]
) -> list[tuple[np.ndarray, ...]]:
    """Per (context, ids): log-prob, μ, σ, entropy and rank of each id (μ, σ, entropy NaN: see the module)."""
    answers = model.prompt_logprobs([[*context, *ids] for context, ids in sequences])
    out: list[tuple[np.ndarray, ...]] = []
    for (_, ids), (logprobs, ranks) in zip(sequences, answers, strict=True):
        n = len(ids)
        missing = np.full(n, np.nan)
        out.append((logprobs[-n:], missing, missing.copy(), missing.copy(), ranks[-n:]))
    return out


def served_kgram_windows(model: ServedModel, passages: Sequence[Sequence[int]], kgram_max: int) -> list[np.ndarray]:
    """Per passage, an (n, K) array: row j, column m = log p(x_{j+m} | start, x_j .. x_{j+m-1}); NaN past the end."""
    prompts: list[list[int]] = []
    shape: list[int] = []
    for ids in passages:
        n = len(ids)
        shape.append(n)
        prompts.extend([model.start_token_id, *ids[j : j + kgram_max]] for j in range(n))
    answers = model.prompt_logprobs(prompts)
    out, row = [], 0
    for n in shape:
        values = np.full((n, kgram_max), np.nan)
        for j in range(n):
            logprobs, _ = answers[row + j]
            values[j, : len(logprobs)] = logprobs
        out.append(values)
        row += n
    return out


def served_passage_pass(model: ServedModel, batch: Sequence[Any], kgram_max: int) -> tuple[list, list | None]:
    """A served model's scoring pass: the passages' per-token statistics and, with ``kgram_max``, their k-gram grids."""
    full = served_full_pass(model, [(e.context, e.ids) for e in batch])
    if not kgram_max:
        return full, None
    return full, [windows_to_grid(v) for v in served_kgram_windows(model, [e.ids for e in batch], kgram_max)]


def served_target_pass(
    model: ServedModel, encoded: Sequence[Any], starts: Sequence[int], progress: ProgressCallback | None
) -> list[np.ndarray]:
    """A served model's target log-probs: each passage's log-probs from ``starts[i]`` on, in one round of requests."""
    answers = served_full_pass(model, [(e.context, e.ids) for e in encoded])
    if progress is not None:
        progress(len(encoded), len(encoded))
    return [full[0][start:] for full, start in zip(answers, starts, strict=True)]
