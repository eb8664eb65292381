"""Contaminate a model on purpose: causal-LM fine-tuning on chosen texts, for ground-truth checks.

Every detector is proven on models whose training data we know: fine-tune a model on some texts, keep
others unseen, and the tests must tell them apart (and must not on two unseen halves). One padded batch
per step, full-sequence loss after the model's start token, AdamW; deterministic on CPU.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch


def fine_tune(model, tokenizer, start_id: int, texts: Sequence[str], *, steps: int, lr: float) -> float:
    """Train ``model`` in place on ``texts`` for ``steps`` full-batch steps; returns the last step's loss."""
    seqs = [[start_id] + tokenizer(text, add_special_tokens=False)["input_ids"] for text in texts]
    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), start_id, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for row, seq in enumerate(seqs):
        ids[row, : len(seq)] = torch.tensor(seq)
        mask[row, : len(seq)] = 1
    labels = ids.masked_fill(mask == 0, -100)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    loss = torch.tensor(float("nan"))
    for _ in range(steps):
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    return float(loss.item())
