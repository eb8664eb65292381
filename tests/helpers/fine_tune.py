"""Contaminate a model on purpose: causal-LM fine-tuning on chosen texts, for ground-truth checks.

Every detector is proven on models whose training data we know: fine-tune a model on some texts, keep
others unseen, and the tests must tell them apart (and must not on two unseen halves). One padded batch
per step, full-sequence loss after the model's start token, AdamW; deterministic on CPU.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

import torch
import transformers
from transformers import AutoModelForCausalLM, PreTrainedModel


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


TUNED_CACHE = "test-models"
"""Cache subfolder (under the LeakLens cache) of fine-tuned tiny models, one folder per recipe."""


def tuned_tiny_model(
    texts: Sequence[str], *, start_id: int, steps: int, lr: float, batch_size: int | None = None, seed: int = 0
) -> tuple[PreTrainedModel, float]:
    """(``tiny_random_model(seed)`` fine-tuned on ``texts``, the last step's loss), trained once per recipe.

    Training is the slow part of a ground-truth test (every step runs the 49,152-word vocabulary both ways), and
    the result depends only on the recipe, so it is cached on disk under the recipe's content hash: the texts and
    settings, this file and the model constructor's source, and the torch and transformers versions. A second
    session reads the saved weights back exactly (float32 safetensors); a changed recipe trains anew.
    """
    from core.config import cache_subdir
    from core.engine.bundled import bundled_tokenizer, tiny_random_model

    tokenizer = bundled_tokenizer()
    recipe = {
        "texts": list(texts),
        "start_id": start_id,
        "steps": steps,
        "lr": lr,
        "batch_size": batch_size,
        "seed": seed,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "sources": [Path(__file__).read_text(), inspect.getsource(tiny_random_model)],
    }
    digest = hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:20]
    folder = cache_subdir(TUNED_CACHE) / digest
    if (folder / LOSS_FILE).exists():
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
        return model, json.loads((folder / LOSS_FILE).read_text())["final_loss"]
    model = tiny_random_model(tokenizer, seed=seed)
    final_loss = fine_tune(model, tokenizer, start_id, texts, steps=steps, lr=lr, batch_size=batch_size)
    building = Path(tempfile.mkdtemp(prefix=f".{digest}-", dir=folder.parent))
    model.save_pretrained(building)
    (building / LOSS_FILE).write_text(json.dumps({"final_loss": final_loss}))
    try:
        building.rename(folder)  # atomic: a folder is either complete or absent
    except OSError:  # another worker saved the same recipe first
        shutil.rmtree(building, ignore_errors=True)
    return model, final_loss


LOSS_FILE = "fine_tune.json"
