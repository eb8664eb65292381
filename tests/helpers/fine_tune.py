"""Contaminate a model on purpose: causal-LM fine-tuning on chosen texts, for ground-truth checks.

Every detector is proven on models whose training data we know: fine-tune a model on some texts, keep
others unseen, and the tests must tell them apart (and must not on two unseen halves). One padded batch
per step, full-sequence loss after the model's start token, AdamW; deterministic on CPU.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch


def fine_tune(
    model, tokenizer, start_id: int, texts: Sequence[str], *, steps: int, lr: float, batch_size: int | None = None
) -> float:
    """Train ``model`` in place on ``texts``; returns the last optimizer step's loss.

    ``steps`` passes over the texts; each pass takes one optimizer step per batch of ``batch_size`` texts
    (None: all texts in one batch, so ``steps`` is the number of optimizer steps). Small batches keep a
    real model's logits (texts x tokens x vocabulary) within memory.
    """
    seqs = [[start_id] + tokenizer(text, add_special_tokens=False)["input_ids"] for text in texts]
    size = batch_size or len(seqs)
    batches = [_padded(seqs[i : i + size], start_id) for i in range(0, len(seqs), size)]
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    loss = torch.tensor(float("nan"))
    for _ in range(steps):
        for ids, mask, labels in batches:
            loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    model.eval()
    return float(loss.item())


def _padded(seqs: Sequence[list[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(ids, attention mask, labels) of right-padded sequences; padding is masked out of the loss."""
    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for row, seq in enumerate(seqs):
        ids[row, : len(seq)] = torch.tensor(seq)
        mask[row, : len(seq)] = 1
    return ids, mask, ids.masked_fill(mask == 0, -100)
