"""Batched greedy decoding with the KV cache.

Prompts of different lengths are left-padded so every row's last prompt token sits in the same column
and the next token is read from one place; explicit position ids (counting real tokens only) keep
padded rows numerically equivalent to unpadded ones. Used by the multiple-choice memorization probes,
where thousands of short continuations must be generated on modest hardware.

Also the whole-sequence log-probabilities that rank the orders of a question's options, with a path
that runs the start all the sequences share once and reuses its keys and values.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from core.engine.batching import length_batches
from core.engine.models import LoadedModel
from core.engine.progress import ProgressCallback

DEFAULT_GENERATION_BUDGET = 4096
"""Padded prompt tokens per batch: bounds the prefill's activation memory."""
MAX_BATCH_ROWS = 64


@dataclass(frozen=True)
class Generation:
    """The greedy continuation of one prompt."""

    token_ids: tuple[int, ...]
    """Generated ids (exactly ``max_new_tokens`` of them unless the prompt filled the context)."""
    first_logprob: float
    """log p of the first generated token (the argmax) given the prompt."""


def greedy_generate(
    lm: LoadedModel,
    prompts: Sequence[Sequence[int]],
    max_new_tokens: Sequence[int] | int,
    *,
    token_budget: int = DEFAULT_GENERATION_BUDGET,
    max_rows: int = MAX_BATCH_ROWS,
    progress: ProgressCallback | None = None,
) -> list[Generation]:
    """Greedily continue each prompt (token ids, start token included) for its own number of tokens.

    Prompts are grouped by length so little padding is wasted; results come back in input order.
    Generation never stops early at an end-of-sequence token: callers compare fixed-length
    continuations, and an early stop would only hide what the model would say next.
    """
    counts = [max_new_tokens] * len(prompts) if isinstance(max_new_tokens, int) else list(max_new_tokens)
    if len(counts) != len(prompts):
        raise ValueError("max_new_tokens needs one entry per prompt.")
    for i, prompt in enumerate(prompts):
        if len(prompt) == 0:
            raise ValueError(f"Prompt {i} is empty; include at least the start token.")
        if counts[i] < 1:
            raise ValueError(f"Prompt {i}: max_new_tokens must be at least 1.")
    room = [max(1, min(counts[i], lm.max_context - len(p))) for i, p in enumerate(prompts)]
    results: list[Generation | None] = [None] * len(prompts)
    done = 0
    widths = [len(p) + room[i] for i, p in enumerate(prompts)]
    for batch in length_batches(widths, token_budget, max_rows=max_rows):
        outputs = _generate_batch(lm, [prompts[i] for i in batch], [room[i] for i in batch])
        for index, generation in zip(batch, outputs):
            results[index] = generation
        done += len(batch)
        if progress is not None:
            progress(done, len(prompts))
    return [r for r in results if r is not None]


@torch.inference_mode()
def _generate_batch(lm: LoadedModel, prompts: Sequence[Sequence[int]], counts: Sequence[int]) -> list[Generation]:
    rows = len(prompts)
    width = max(len(p) for p in prompts)
    steps = max(counts)
    input_ids = torch.full((rows, width), lm.pad_token_id, dtype=torch.long)
    mask = torch.zeros((rows, width + steps), dtype=torch.long)
    for row, prompt in enumerate(prompts):
        input_ids[row, width - len(prompt) :] = torch.tensor(list(prompt), dtype=torch.long)
        mask[row, width - len(prompt) : width] = 1
    positions = (mask[:, :width].cumsum(-1) - 1).clamp_min(0)
    device = lm.device
    input_ids, mask, positions = input_ids.to(device), mask.to(device), positions.to(device)
    out = lm.model(
        input_ids=input_ids,
        attention_mask=mask[:, :width],
        position_ids=positions,
        use_cache=True,
        logits_to_keep=1,  # only the last position's logits are read; skips width x vocab of work
    )
    cache = out.past_key_values
    logits = out.logits[:, -1].float()
    first_logprob = (logits.max(-1).values - torch.logsumexp(logits, -1)).tolist()
    next_pos = positions[:, -1:] + 1
    generated = torch.empty((rows, steps), dtype=torch.long, device=device)
    for step in range(steps):
        token = logits.argmax(-1)
        generated[:, step] = token
        if step + 1 == steps:
            break
        mask[:, width + step] = 1
        out = lm.model(
            input_ids=token[:, None],
            attention_mask=mask[:, : width + step + 1],
            position_ids=next_pos,
            past_key_values=cache,
            use_cache=True,
        )
        cache = out.past_key_values
        logits = out.logits[:, -1].float()
        next_pos = next_pos + 1
    ids = generated.cpu().tolist()
    return [
        Generation(token_ids=tuple(ids[row][: counts[row]]), first_logprob=float(first_logprob[row]))
        for row in range(rows)
    ]


@torch.inference_mode()
def greedy_generate_slow(lm: LoadedModel, prompt: Sequence[int], max_new_tokens: int) -> tuple[int, ...]:
    """Reference path without cache or padding: one full forward pass per generated token (for tests)."""
    ids = list(prompt)
    for _ in range(max_new_tokens):
        logits = lm.model(input_ids=torch.tensor([ids], device=lm.device), use_cache=False).logits[0, -1]
        ids.append(int(logits.float().argmax()))
    return tuple(ids[len(prompt) :])


def _check_sequences(lm: LoadedModel, sequences: Sequence[Sequence[int]]) -> None:
    for i, seq in enumerate(sequences):
        if len(seq) < 2:
            raise ValueError(f"Sequence {i} needs a start token and at least one token.")
        if len(seq) > lm.max_context:
            raise ValueError(f"Sequence {i} has {len(seq)} tokens; the model's context holds {lm.max_context}.")


@torch.inference_mode()
def sequence_logprobs(
    lm: LoadedModel,
    sequences: Sequence[Sequence[int]],
    *,
    token_budget: int = DEFAULT_GENERATION_BUDGET,
    progress: ProgressCallback | None = None,
) -> list[float]:
    """Total log-probability of each sequence's tokens after its first (the start token).

    Only the actual tokens' log-probs are gathered, which is all that ranking whole texts needs
    (the per-token statistics of ``core.engine.scoring`` cost several passes over the vocabulary).
    """
    _check_sequences(lm, sequences)
    totals = [0.0] * len(sequences)
    done = 0
    for batch in length_batches([len(s) for s in sequences], token_budget, max_rows=MAX_BATCH_ROWS):
        width = len(sequences[batch[0]])
        input_ids = torch.full((len(batch), width), lm.pad_token_id, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for row, index in enumerate(batch):
            seq = sequences[index]
            input_ids[row, : len(seq)] = torch.tensor(list(seq), dtype=torch.long)
            mask[row, : len(seq)] = 1
        input_ids, mask = input_ids.to(lm.device), mask.to(lm.device)
        logits = lm.model(input_ids=input_ids, attention_mask=mask, use_cache=False).logits[:, :-1].float()
        picked = logits.gather(2, input_ids[:, 1:, None])[:, :, 0] - torch.logsumexp(logits, dim=-1)
        picked = (picked * mask[:, 1:]).sum(-1).double().cpu().tolist()
        for row, index in enumerate(batch):
            totals[index] = float(picked[row])
        done += len(batch)
        if progress is not None:
            progress(done, len(sequences))
    return totals


def shared_prefix_length(sequences: Sequence[Sequence[int]]) -> int:
    """How many leading tokens every sequence has in common."""
    shortest = min((len(s) for s in sequences), default=0)
    length = 0
    while length < shortest and all(s[length] == sequences[0][length] for s in sequences):
        length += 1
    return length


@torch.inference_mode()
def sequence_logprobs_shared_prefix(
    lm: LoadedModel,
    sequences: Sequence[Sequence[int]],
    *,
    token_budget: int = DEFAULT_GENERATION_BUDGET,
) -> list[float]:
    """The totals of ``sequence_logprobs`` for sequences that start alike, running the common start once.

    Orders of one question's options all begin with the same question text: its keys and values are
    computed once, copied to every row, and only the differing tails go through the model (and through
    the vocabulary-wide log-softmax). Without a common start of at least two tokens this is simply
    ``sequence_logprobs``.
    """
    _check_sequences(lm, sequences)
    # Every sequence keeps at least one token of its own after the shared part.
    shared = min(shared_prefix_length(sequences), min(len(s) for s in sequences) - 1)
    if shared < 2:
        return sequence_logprobs(lm, sequences, token_budget=token_budget)
    device = lm.device
    prefix = torch.tensor([list(sequences[0][:shared])], dtype=torch.long, device=device)
    out = lm.model(input_ids=prefix, use_cache=True)
    prefix_logp = torch.log_softmax(out.logits[0].float(), dim=-1)
    prefix_total = float(prefix_logp[:-1].gather(1, prefix[0, 1:, None]).sum().double())
    first_logp = prefix_logp[-1]  # predicts each sequence's first own token
    prefix_cache = out.past_key_values
    if not hasattr(prefix_cache, "batch_repeat_interleave"):  # a model without a reusable cache object
        return sequence_logprobs(lm, sequences, token_budget=token_budget)
    tails = [list(s[shared:]) for s in sequences]
    totals = [0.0] * len(tails)
    for batch in length_batches([len(t) for t in tails], token_budget, max_rows=MAX_BATCH_ROWS):
        width = len(tails[batch[0]])
        input_ids = torch.full((len(batch), width), lm.pad_token_id, dtype=torch.long)
        mask = torch.zeros((len(batch), shared + width), dtype=torch.long)
        mask[:, :shared] = 1
        for row, index in enumerate(batch):
            input_ids[row, : len(tails[index])] = torch.tensor(tails[index], dtype=torch.long)
            mask[row, shared : shared + len(tails[index])] = 1
        input_ids, mask = input_ids.to(device), mask.to(device)
        cache = copy.deepcopy(prefix_cache)
        cache.batch_repeat_interleave(len(batch))
        positions = torch.arange(shared, shared + width, device=device).expand(len(batch), width)
        logits = lm.model(
            input_ids=input_ids, attention_mask=mask, position_ids=positions, past_key_values=cache, use_cache=True
        ).logits[:, :-1].float()
        picked = logits.gather(2, input_ids[:, 1:, None])[:, :, 0] - torch.logsumexp(logits, dim=-1)
        tail_totals = (picked * mask[:, shared + 1 :]).sum(-1) + first_logp[input_ids[:, 0]]
        for row, index in enumerate(batch):
            totals[index] = prefix_total + float(tail_totals[row].double())
    return totals
