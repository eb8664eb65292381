"""The slow greedy decoding that ``core.engine.generation``'s batched, cached path must equal."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from core.engine.models import LoadedModel


@torch.inference_mode()
def greedy_generate_slow(lm: LoadedModel, prompt: Sequence[int], max_new_tokens: int) -> tuple[int, ...]:
    """Reference path without cache or padding: one full forward pass per generated token (for tests)."""
    ids = list(prompt)
    for _ in range(max_new_tokens):
        logits = lm.model(input_ids=torch.tensor([ids], device=lm.device), use_cache=False).logits[0, -1]
        ids.append(int(logits.float().argmax()))
    return tuple(ids[len(prompt) :])
