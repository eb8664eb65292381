"""Batched greedy decoding with the KV cache.

Prompts of different lengths are left-padded so every row's last prompt token sits in the same column
and the next token is read from one place; explicit position ids (counting real tokens only) keep
padded rows numerically equivalent to unpadded ones. Used by the multiple-choice memorisation probes,
where thousands of short continuations must be generated on modest hardware.

Also the whole-sequence log-probabilities that rank the orders of a question's options, with a path
that runs the start all the sequences share once and reuses its keys and values.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import numpy as np
import torch
from transformers.cache_utils import DynamicCache, DynamicLayer

if TYPE_CHECKING:
    from transformers.cache_utils import CacheLayerMixin, DummyLayer, LinearAttentionCacheLayerMixin

from core.engine.batching import length_batches
from core.engine.model_source import ScoringModel
from core.engine.models import LoadedModel, model_fact
from core.engine.progress import ProgressCallback
from core.engine.scoring import forward_kept
from core.engine.served import ServedModel

DEFAULT_GENERATION_BUDGET = 4096
"""Padded prompt tokens per batch: bounds the prefill's activation memory."""
MAX_BATCH_ROWS = 64
SERVED_GENERATION_CHUNK = 64
"""Prompts handed to a server between progress updates."""


@dataclass(frozen=True)
class Generation:
    """The greedy continuation of one prompt."""

    token_ids: tuple[int, ...]
    """Generated ids (exactly ``max_new_tokens`` of them unless the prompt filled the context)."""
    first_logprob: float
    """log p of the first generated token (the argmax) given the prompt."""


def greedy_generate(
    lm: ScoringModel,
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
    room = [generation_room(lm, len(p), counts[i]) for i, p in enumerate(prompts)]
    return lm.visit(
        lambda here: loaded_greedy_pass(here, prompts, room, token_budget, max_rows, progress),
        lambda server: served_greedy_pass(server, prompts, room, progress),
    )


def loaded_greedy_pass(
    lm: LoadedModel,
    prompts: Sequence[Sequence[int]],
    room: Sequence[int],
    token_budget: int,
    max_rows: int,
    progress: ProgressCallback | None,
) -> list[Generation]:
    """In process: prompts of like length batched, each continued by its ``room`` tokens."""
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


def greedy_picks(logits: torch.Tensor) -> tuple[list[int], list[float]]:
    """Per row of ``logits`` (..., vocab): the greedy token and its log-probability."""
    return logits.argmax(-1).tolist(), (logits.max(-1).values - torch.logsumexp(logits, -1)).tolist()


def served_greedy_pass(
    lm: ServedModel, prompts: Sequence[Sequence[int]], counts: Sequence[int], progress: ProgressCallback | None
) -> list[Generation]:
    """The server's greedy continuations, in chunks so progress moves (the server batches each chunk)."""
    results: list[Generation] = []
    for start in range(0, len(prompts), SERVED_GENERATION_CHUNK):
        end = min(len(prompts), start + SERVED_GENERATION_CHUNK)
        for ids, first in lm.generate(prompts[start:end], counts[start:end]):
            results.append(Generation(token_ids=tuple(ids), first_logprob=first))
        if progress is not None:
            progress(end, len(prompts))
    return results


def generation_room(lm: ScoringModel, prompt_length: int, count: int) -> int:
    """Tokens a prompt is continued by: ``count``, as far as the context allows, and at least one."""
    return max(1, min(count, lm.max_context - prompt_length))


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
    logits = out.logits[:, -1].float()
    first_logprob = (logits.max(-1).values - torch.logsumexp(logits, -1)).tolist()
    generated = _greedy_steps(lm, out.past_key_values, mask, width, positions[:, -1:] + 1, logits.argmax(-1), steps)
    ids = generated.cpu().tolist()
    return [
        Generation(token_ids=tuple(ids[row][: counts[row]]), first_logprob=float(first_logprob[row]))
        for row in range(rows)
    ]


def _greedy_steps(
    lm: LoadedModel,
    cache,
    mask: torch.Tensor,
    width: int,
    next_pos: torch.Tensor,
    token: torch.Tensor,
    steps: int,
    counts: Sequence[int] | None = None,
) -> torch.Tensor:
    """(rows, steps) greedy ids: ``token`` first, then each next token fed back through the cache.

    ``mask`` (rows, at least width + steps - 1) marks the cached columns ``:width``; the column of each fed
    token is opened as it goes in, at position ``next_pos`` (rows, 1), which then counts up. With ``counts``
    (ids wanted per row, ``token`` included), rows that have theirs leave the batch, so a batch of mixed
    counts does not run every row to the longest (their ids past their count are left as they are): at
    once when they are the last rows (the cache keeps its leading rows without a copy, hence callers put
    rows in descending counts), else once they are a quarter of the batch.
    """
    generated = torch.zeros((token.shape[0], steps), dtype=torch.long, device=token.device)
    generated[:, 0] = token
    rows = torch.arange(token.shape[0], device=token.device)
    wanted = None if counts is None else torch.tensor(list(counts), device=token.device)
    for step in range(1, steps):
        if wanted is not None:
            going = wanted[rows] > step
            if not going.any():
                break
            finished = int((~going).sum())
            if finished and (not going[-finished:].any() or 4 * finished >= len(rows)):
                keep = going.nonzero()[:, 0]
                cache.batch_select_indices(keep)
                rows, mask, next_pos, token = rows[keep], mask[keep], next_pos[keep], token[keep]
        mask[:, width + step - 1] = 1
        out = lm.model(
            input_ids=token[:, None],
            attention_mask=mask[:, : width + step],
            position_ids=next_pos,
            past_key_values=cache,
            use_cache=True,
        )
        cache = out.past_key_values
        token = out.logits[:, -1].float().argmax(-1)
        generated[rows, step] = token
        next_pos = next_pos + 1
    return generated


def _check_sequences(lm: ScoringModel, sequences: Sequence[Sequence[int]]) -> None:
    for i, seq in enumerate(sequences):
        if len(seq) < 2:
            raise ValueError(f"Sequence {i} needs a start token and at least one token.")
        if len(seq) > lm.max_context:
            raise ValueError(f"Sequence {i} has {len(seq)} tokens; the model's context holds {lm.max_context}.")


@torch.inference_mode()
def sequence_logprobs(
    lm: ScoringModel,
    sequences: Sequence[Sequence[int]],
    *,
    token_budget: int = DEFAULT_GENERATION_BUDGET,
    progress: ProgressCallback | None = None,
    scored_from: Sequence[int] | None = None,
) -> list[float]:
    """Total log-probability of each sequence's tokens after its first (the start token).

    Only the actual tokens' log-probs are gathered, which is all that ranking whole texts needs
    (the per-token statistics of ``core.engine.scoring`` cost several passes over the vocabulary).
    ``scored_from[i]`` (default 1): the first position of sequence ``i`` whose token counts; the tokens
    before it are context only (a sliding window over a text longer than the model's context).
    """
    _check_sequences(lm, sequences)
    starts = [1] * len(sequences) if scored_from is None else [int(f) for f in scored_from]
    if len(starts) != len(sequences) or any(not 1 <= f < len(s) for f, s in zip(starts, sequences, strict=True)):
        raise ValueError("scored_from needs one position per sequence, at least 1 and inside the sequence.")
    return lm.visit(
        lambda here: loaded_sequence_pass(here, sequences, starts, token_budget, progress),
        lambda server: served_sequence_pass(server, sequences, starts, progress),
    )


@torch.inference_mode()
def loaded_sequence_pass(
    lm: LoadedModel,
    sequences: Sequence[Sequence[int]],
    starts: Sequence[int],
    token_budget: int,
    progress: ProgressCallback | None,
) -> list[float]:
    """In process: the totals of ``sequence_logprobs``, batched by length."""
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
        counted = mask.clone()
        for row, index in enumerate(batch):
            counted[row, : starts[index]] = 0
        input_ids, mask, counted = input_ids.to(lm.device), mask.to(lm.device), counted.to(lm.device)
        logits = lm.model(input_ids=input_ids, attention_mask=mask, use_cache=False).logits[:, :-1].float()
        picked = logits.gather(2, input_ids[:, 1:, None])[:, :, 0] - torch.logsumexp(logits, dim=-1)
        picked = (picked.double() * counted[:, 1:]).sum(-1).cpu().tolist()
        for row, index in enumerate(batch):
            totals[index] = float(picked[row])
        done += len(batch)
        if progress is not None:
            progress(done, len(sequences))
    return totals


def served_sequence_pass(
    lm: ServedModel, sequences: Sequence[Sequence[int]], starts: Sequence[int], progress: ProgressCallback | None
) -> list[float]:
    """The server's log-probs of each sequence's tokens from ``starts[i]`` on, summed in float64."""
    answers = lm.prompt_logprobs(sequences)
    # The server's list starts at the sequence's second token (position 1).
    totals = [
        float(np.sum(logprobs[start - 1 :], dtype=np.float64))
        for (logprobs, _), start in zip(answers, starts, strict=True)
    ]
    if progress is not None:
        progress(len(sequences), len(sequences))
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
    lm: ScoringModel,
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
    return lm.visit(
        lambda here: _shared_prefix_totals(here, sequences, token_budget),
        lambda server: sequence_logprobs(server, sequences),  # a server runs what it runs: no cache to hand it
    )


def _shared_prefix_totals(lm: LoadedModel, sequences: Sequence[Sequence[int]], token_budget: int) -> list[float]:
    """The in-process path of ``sequence_logprobs_shared_prefix``."""
    # Every sequence keeps at least one token of its own after the shared part.
    shared = min(shared_prefix_length(sequences), min(len(s) for s in sequences) - 1)
    if shared < 2:
        return sequence_logprobs(lm, sequences, token_budget=token_budget)
    device = lm.device
    prefix = torch.tensor([list(sequences[0][:shared])], dtype=torch.long, device=device)
    out = lm.model(input_ids=prefix, use_cache=True)
    prefix_logp = torch.log_softmax(out.logits[0].float(), dim=-1)
    prefix_total = float(prefix_logp[:-1].gather(1, prefix[0, 1:, None]).double().sum())
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
        logits = (
            lm.model(
                input_ids=input_ids, attention_mask=mask, position_ids=positions, past_key_values=cache, use_cache=True
            )
            .logits[:, :-1]
            .float()
        )
        picked = logits.gather(2, input_ids[:, 1:, None])[:, :, 0] - torch.logsumexp(logits, dim=-1)
        tail_totals = (picked.double() * mask[:, shared + 1 :]).sum(-1) + first_logp[input_ids[:, 0]].double()
        for row, index in enumerate(batch):
            totals[index] = prefix_total + float(tail_totals[row])
    return totals


# ------------------------------------------------------------------------------ continuing from a cache


@dataclass(frozen=True)
class _Segment:
    layers: tuple[tuple[torch.Tensor, torch.Tensor], ...]
    """Per layer, the keys and values of a whole batch: (rows, heads, length, head dim)."""
    row: int
    start: int
    stop: int


@dataclass(frozen=True)
class CachedPrefix:
    """The keys and values of one sequence's first ``length`` tokens, as views into batch caches.

    The views point into the caches of the passes that computed them, so cutting a prefix or sharing it
    between sequences copies nothing; a batch is laid out only when the next pass needs it.
    """

    segments: tuple[_Segment, ...]
    length: int

    @staticmethod
    def of_row(
        layers: tuple[tuple[torch.Tensor, torch.Tensor], ...], row: int, spans: Sequence[tuple[int, int]]
    ) -> CachedPrefix:
        """The prefix made of columns ``spans`` (in order) of one row of a batch's per-layer keys and values."""
        segments = tuple(_Segment(layers, row, start, stop) for start, stop in spans if stop > start)
        return CachedPrefix(segments, sum(stop - start for start, stop in spans))

    def cut(self, length: int) -> CachedPrefix:
        """The first ``length`` tokens of this prefix."""
        if not 0 <= length <= self.length:
            raise ValueError(f"Cannot cut a cached prefix of {self.length} tokens to {length}.")
        kept, left = [], length
        for segment in self.segments:
            if left == 0:
                break
            take = min(left, segment.stop - segment.start)
            kept.append(_Segment(segment.layers, segment.row, segment.start, segment.start + take))
            left -= take
        return CachedPrefix(tuple(kept), length)


EMPTY_PREFIX = CachedPrefix((), 0)


def reusable_cache_bytes(lm: LoadedModel) -> int | None:
    """Bytes of keys and values per token when the model's cache is the plain per-layer keys and values
    that ``CachedPrefix`` lays out; None for sliding-window, recurrent or quantised caches (their callers
    take the prefill path instead)."""
    return model_fact(lm, "reusable_cache_bytes", _measure_cache_bytes)


def _measure_cache_bytes(lm: LoadedModel) -> int | None:
    with torch.inference_mode():
        out = lm.model(input_ids=torch.tensor([[lm.start_token_id]], device=lm.device), use_cache=True)
    cache = out.past_key_values
    if type(cache) is not DynamicCache or not all(type(layer) is DynamicLayer for layer in cache.layers):
        return None
    layers = cast(list[DynamicLayer], cache.layers)  # checked just above: each is a plain DynamicLayer
    # The forward pass filled every layer, so none of its keys or values is None.
    tensors = cast(list[torch.Tensor], [t for layer in layers for t in (layer.keys, layer.values)])
    return sum(t.numel() * t.element_size() for t in tensors)


class _ReservedLayer(DynamicLayer):
    """A layer's keys and values with room reserved for what comes next: appending writes into that room
    instead of concatenating, which would copy the whole batch's keys and values at every decoding step."""

    keys: torch.Tensor  # never None here, unlike a plain layer's: set from the first by _expose()
    values: torch.Tensor

    def __init__(self, keys: torch.Tensor, values: torch.Tensor, length: int):
        super().__init__()
        self.lazy_initialization(keys, values)
        self._room, self._length = (keys, values), length
        self._expose()

    def _expose(self) -> None:
        keys, values = self._room
        self.keys, self.values = keys[:, :, : self._length], values[:, :, : self._length]

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs):
        keys, values = self._room
        end = self._length + key_states.shape[-2]
        if end > keys.shape[-2]:  # more than was reserved: grow like a plain layer
            return super().update(key_states, value_states, *args, **kwargs)
        keys[:, :, self._length : end] = key_states
        values[:, :, self._length : end] = value_states
        self._length = end
        self._expose()
        return self.keys, self.values

    def get_seq_length(self) -> int:
        return self.keys.shape[-2]

    def batch_select_indices(self, indices: torch.Tensor) -> None:
        keys, values = self._room
        if bool((indices == torch.arange(len(indices), device=indices.device)).all()):
            self._room = (keys[: len(indices)], values[: len(indices)])  # the leading rows: a view, no copy
        else:
            self._room = (keys[indices], values[indices])
        self._expose()


def _layout(prefixes: Sequence[CachedPrefix], width: int, reserve: int) -> DynamicCache:
    """One batch cache holding each prefix right-aligned in ``width`` columns (zeros before it, masked),
    with ``reserve`` more columns of room for the tokens that follow.

    The room is left unset: a column is read only once its token has been written there (``_ReservedLayer``).
    The masked columns before a prefix are read, and must be finite, so they are zeroed."""
    template = next(p.segments[0] for p in prefixes if p.segments)
    layers: list[CacheLayerMixin | LinearAttentionCacheLayerMixin | DummyLayer] = []  # Cache.layers' type
    for layer, (k0, v0) in enumerate(template.layers):
        keys = k0.new_empty((len(prefixes), k0.shape[1], width + reserve, k0.shape[3]))
        values = v0.new_empty((len(prefixes), v0.shape[1], width + reserve, v0.shape[3]))
        for row, prefix in enumerate(prefixes):
            at = width - prefix.length
            keys[row, :, :at] = 0
            values[row, :, :at] = 0
            for seg in prefix.segments:
                n = seg.stop - seg.start
                k, v = seg.layers[layer]
                keys[row, :, at : at + n] = k[seg.row, :, seg.start : seg.stop]
                values[row, :, at : at + n] = v[seg.row, :, seg.start : seg.stop]
                at += n
        layers.append(_ReservedLayer(keys, values, width))
    cache = DynamicCache()
    cache.layers = layers
    return cache


@torch.inference_mode()
def run_after_prefixes(
    lm: LoadedModel,
    prefixes: Sequence[CachedPrefix],
    tokens: Sequence[Sequence[int]],
    keep: Sequence[Sequence[int]],
) -> tuple[list[CachedPrefix], torch.Tensor]:
    """One padded pass of each row's ``tokens`` after its cached prefix (``EMPTY_PREFIX``: from scratch).

    Returns each row's prefix extended by its tokens, and the float32 logits at the token indices in
    ``keep`` (row by row, each row's indices in ascending order). Prefixes are right-aligned and tokens
    follow them, so every row sees exactly its own prefix and tokens; positions count real tokens only.
    """
    rows = len(tokens)
    past = [p.length for p in prefixes]
    width, span = max(past), max(len(t) for t in tokens)
    input_ids = torch.full((rows, span), lm.pad_token_id, dtype=torch.long)
    mask = torch.zeros((rows, width + span), dtype=torch.long)
    kept = torch.zeros((rows, span), dtype=torch.bool)
    for row, (seq, indices) in enumerate(zip(tokens, keep, strict=True)):
        input_ids[row, : len(seq)] = torch.tensor(list(seq), dtype=torch.long)
        mask[row, width - past[row] : width + len(seq)] = 1
        kept[row, list(indices)] = True
    positions = torch.tensor(past)[:, None] + torch.arange(span)
    inputs = {"input_ids": input_ids, "attention_mask": mask, "position_ids": positions, "use_cache": True}
    inputs = {k: v.to(lm.device) if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}
    if width:
        inputs["past_key_values"] = _layout(prefixes, width, span)
    logits, cache = forward_kept(lm, kept, **inputs)
    # The batch cache holds each row's prefix (laid out) and its tokens: one segment, no older buffers kept.
    layers = tuple((layer.keys, layer.values) for layer in cache.layers)
    extended = [
        CachedPrefix((_Segment(layers, row, width - past[row], width + len(seq)),), past[row] + len(seq))
        for row, seq in enumerate(tokens)
    ]
    return extended, logits


def _decoding_batches(
    widths: Sequence[int], counts: Sequence[int], token_budget: int, max_rows: int
) -> list[list[int]]:
    """Row indices batched for decoding: by width, then by count within rows of similar widths.

    Every decoding step reads every weight, so steps are what cost and a batch should need the same number
    of them for most rows (by count); rows of similar widths lay out little padding, and ``token_budget``
    bounds rows × widest row, the keys and values a batch holds (all the memory a decoding step needs).
    """
    batches = []
    for group in length_batches(widths, 4 * token_budget):
        rows = max(1, min(max_rows, token_budget // widths[group[0]]))
        steps = [1 + counts[i] for i in group]
        for batch in length_batches(steps, rows * max(steps), max_rows=rows):
            batches.append([group[i] for i in batch])
    return batches


@torch.inference_mode()
def greedy_after_prefixes(
    lm: LoadedModel,
    prefixes: Sequence[CachedPrefix],
    first_tokens: Sequence[int],
    counts: Sequence[int],
    *,
    token_budget: int = DEFAULT_GENERATION_BUDGET,
    max_rows: int = MAX_BATCH_ROWS,
) -> list[tuple[int, ...]]:
    """Greedy continuations of ``prefix + first token``: the ``count`` tokens after the first token.

    The prefill is already done (the prefixes' keys and values), so only decoding steps run, in batches
    of similar widths and counts (``_decoding_batches``); rows leave their batch once they have their count.
    """
    results: list[tuple[int, ...]] = [()] * len(prefixes)
    if not prefixes:
        return results
    for batch in _decoding_batches(
        [p.length + 1 + c for p, c in zip(prefixes, counts, strict=True)], counts, token_budget, max_rows
    ):
        batch = sorted(batch, key=lambda i: -counts[i])  # rows that finish first are the last (_greedy_steps)
        chosen = [prefixes[i] for i in batch]
        width = max(p.length for p in chosen)
        steps = 1 + max(counts[i] for i in batch)
        mask = torch.zeros((len(batch), width + steps), dtype=torch.long)
        for row, prefix in enumerate(chosen):
            mask[row, width - prefix.length : width] = 1
        device = lm.device
        next_pos = torch.tensor([[p.length] for p in chosen], device=device)
        token = torch.tensor([first_tokens[i] for i in batch], device=device)
        cache = _layout(chosen, width, steps) if width else None
        wanted = [1 + counts[i] for i in batch]
        generated = _greedy_steps(lm, cache, mask.to(device), width, next_pos, token, steps, wanted).cpu().tolist()
        for row, index in enumerate(batch):
            results[index] = tuple(generated[row][1 : 1 + counts[index]])
    return results
