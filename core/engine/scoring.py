"""The one expensive step: batched forward passes that turn passages into per-token records.

Alignment: a passage becomes ids ``x_0..x_n`` with ``x_0`` the model's start token; the log-prob of
``x_i`` is read from the logits at position ``i-1``. Every detector reads the records produced here, so
each passage costs one forward pass (plus one batched window pass for k-gram normalisation).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import torch

from core.data.text import check_unicode
from core.engine.batching import length_batches
from core.engine.model_source import ScoringModel, encode_with_offsets
from core.engine.models import LoadedModel
from core.engine.progress import ProgressCallback
from core.engine.records import MAX_KGRAM, TokenRecords, windows_to_grid
from core.engine.served_scoring import SERVED_TOKEN_BUDGET, served_passage_pass, served_target_pass
from core.errors import InputTextError

DEFAULT_TOKEN_BUDGET = 2048
"""Padded tokens per forward pass. Bounds memory: logits take budget × vocab × 4 bytes."""


class TruncationWarning(UserWarning):
    """A passage was longer than the model's context (or the requested limit) and was cut."""


@dataclass(frozen=True)
class _Encoded:
    context: list[int]
    """Ids before the first scored token: start token (+ optional prefix)."""
    ids: list[int]
    offsets: list[tuple[int, int]]
    n_dropped: int
    dropped_exact: bool = True


def score_texts(
    lm: ScoringModel,
    texts: Sequence[str],
    *,
    kgram_max: int = MAX_KGRAM,
    max_tokens: int | None = None,
    token_budget: int = DEFAULT_TOKEN_BUDGET,
    prefix: str | None = None,
    progress: ProgressCallback | None = None,
) -> list[TokenRecords]:
    """Score every passage with one batched pass; results come back in input order.

    kgram_max: compute context-limited log-probs for k = 1..kgram_max (0 = skip; needed by k-gram slopes).
    max_tokens: score at most this many tokens per passage (the model's context is always a limit too).
    prefix: text placed between the start token and each passage, not scored (ReCaLL-style conditioning).
    """
    if not 0 <= kgram_max <= MAX_KGRAM:
        raise ValueError(f"kgram_max must be between 0 and {MAX_KGRAM}, got {kgram_max}.")
    if token_budget < 1:
        raise ValueError("token_budget must be positive.")
    encoded = encode_texts(lm, texts, max_tokens=max_tokens, prefix=prefix)
    total = len(encoded)
    results: list[TokenRecords | None] = [None] * total
    done = 0
    # A server batches internally and runs --concurrency requests at once: it is kept busy with larger batches.
    budget = lm.visit(lambda _: token_budget, lambda _: max(token_budget, SERVED_TOKEN_BUDGET))
    for batch in length_batches([len(e.context) + len(e.ids) for e in encoded], budget):
        chosen = [encoded[i] for i in batch]
        full, kgrams = lm.visit(
            partial(loaded_passage_pass, batch=chosen, kgram_max=kgram_max, token_budget=token_budget),
            partial(served_passage_pass, batch=chosen, kgram_max=kgram_max),
        )
        for j, index in enumerate(batch):
            enc = encoded[index]
            logprobs, mu, sigma, entropy, rank = full[j]
            kg = None
            if kgrams is not None:
                kg = _fill_short_contexts(kgrams[j])
            results[index] = TokenRecords(
                text=texts[index],
                token_ids=np.asarray(enc.ids, dtype=np.int64),
                offsets=np.asarray(enc.offsets, dtype=np.int64).reshape(-1, 2),
                logprobs=logprobs,
                mean_logprob=mu,
                std_logprob=sigma,
                entropy=entropy,
                rank=rank,
                kgram_logprobs=kg,
                n_dropped=enc.n_dropped,
                n_dropped_exact=enc.dropped_exact,
            )
        done += len(batch)
        if progress is not None:
            progress(done, total)
    return [r for r in results if r is not None]


def encode_texts(
    lm: ScoringModel, texts: Sequence[str], *, max_tokens: int | None = None, prefix: str | None = None
) -> list[_Encoded]:
    """Tokenize passages with character offsets, validate them, and truncate to the context."""
    for row, text in enumerate(texts):
        name = _passage_name(row, len(texts))
        if not isinstance(text, str):
            raise InputTextError(f"{name} is not text (got {type(text).__name__}); nothing to score.")
        if not text.strip():
            raise InputTextError(f"{name} is empty or whitespace only; nothing to score.")
        check_unicode(text, name, "Only valid UTF-8 text can be scored.")
    if max_tokens is not None and max_tokens < 1:
        raise InputTextError(
            f"max_tokens (--max-tokens) must be at least 1, got {max_tokens}; nothing would be scored."
        )
    context = [lm.start_token_id]
    if prefix:
        context += encode_with_offsets(lm, prefix)[0]
    limit = lm.max_context - len(context)
    if limit < 1:
        raise InputTextError(
            f"The prefix ({len(context) - 1} tokens) fills the model's context of {lm.max_context} tokens."
        )
    if max_tokens is not None:
        limit = min(limit, max_tokens)
    out = []
    for row, text in enumerate(texts):
        ids, offsets, total, exact = _tokenize_bounded(lm, text, limit)
        if not ids:
            raise InputTextError(f"{_passage_name(row, len(texts))} produced no tokens; nothing to score.")
        dropped = max(0, total - limit)
        if dropped:
            about = "" if exact else "about "
            warnings.warn(
                f"{_passage_name(row, len(texts))} has {about}{total} tokens but at most {limit} fit; the last "
                f"{about}{dropped} tokens were dropped.",
                TruncationWarning,
                stacklevel=3,
            )
            ids, offsets = ids[:limit], offsets[:limit]
        out.append(_Encoded(context=context, ids=ids, offsets=offsets, n_dropped=dropped, dropped_exact=exact))
    return out


def _passage_name(row: int, n: int) -> str:
    """How an error names a passage: a lone passage has no row number to speak of."""
    return "The passage" if n == 1 else f"Passage {row + 1} of {n}"


COUNT_ALL_CHARS = 100_000
"""Passages up to this many characters are tokenized whole, so a truncated one reports exactly how many
tokens were dropped. Longer ones are tokenized only as far as can be scored (see ``_tokenize_bounded``)."""
CHARS_PER_TOKEN_BOUND = 8
"""First guess of characters per token when bounding a long passage; grown when a text is denser."""
CUT_SLACK_TOKENS = 32
"""Tokens beyond the limit that must come out of the bounded prefix: the cut's own word lies past them,
so it cannot change the tokens that are scored (tokenizers split text into words before merging)."""


def _tokenize_bounded(lm: ScoringModel, text: str, limit: int) -> tuple[list[int], list[tuple[int, int]], int, bool]:
    """(ids, offsets, total tokens, whether the total is exact) without tokenizing what cannot be scored.

    A 10 MB row tokenized whole costs gigabytes and tens of seconds for a few thousand scored tokens.
    Beyond ``COUNT_ALL_CHARS``, only a character-bounded prefix is tokenized (grown until it yields the
    limit plus ``CUT_SLACK_TOKENS``); the scored tokens are then exactly those of the whole text, and the
    dropped count is estimated from the prefix's characters per token.
    """
    if len(text) <= COUNT_ALL_CHARS:
        ids, offsets = encode_with_offsets(lm, text)
        return ids, offsets, len(ids), True
    chars = (limit + CUT_SLACK_TOKENS) * CHARS_PER_TOKEN_BOUND
    while chars < len(text):
        ids, offsets = encode_with_offsets(lm, text[:chars])
        if len(ids) >= limit + CUT_SLACK_TOKENS:
            scored_end = offsets[limit - 1][1]
            estimate = limit + round((len(text) - scored_end) * limit / max(scored_end, 1))
            return ids[:limit], offsets[:limit], max(estimate, limit + 1), False
        chars *= 4
    ids, offsets = encode_with_offsets(lm, text)
    return ids, offsets, len(ids), True


STATS_CHUNK = 256
"""Rows of vocabulary-sized temporaries processed at once: keeps them in cache instead of main memory."""


def _logits_at(
    lm: LoadedModel, input_ids: torch.Tensor, attention: torch.Tensor | None, keep: torch.Tensor
) -> torch.Tensor:
    """Logits only at the positions where ``keep`` (bool, batch × length) is True, flattened row-major.

    The vocabulary projection is the largest single matmul per position; skipping padding, prefixes and
    unused window positions avoids it and the log-softmax that follows.
    """
    kwargs = {"input_ids": input_ids.to(lm.device), "use_cache": False}
    if attention is not None:
        kwargs["attention_mask"] = attention.to(lm.device)
    return forward_kept(lm, keep, **kwargs)[0]


def forward_kept(lm: LoadedModel, keep: torch.Tensor, **model_inputs) -> tuple[torch.Tensor, Any]:
    """(float32 logits where ``keep`` is True, flattened row-major; the model's cache) of one model call.

    The cache is a transformers ``Cache`` whose layer kinds depend on the architecture, hence ``Any``.

    The one place that asks the model for selected logits only, with a fallback for architectures that
    cannot (``model_inputs`` must already be on the model's device).
    """
    keep = keep.to(lm.device)
    try:
        out = lm.model(**model_inputs, logits_to_keep=keep)
        return out.logits.float(), out.past_key_values
    except TypeError:  # architectures without ``logits_to_keep``: project everything, then select
        out = lm.model(**model_inputs)
        return out.logits[keep].float(), out.past_key_values


def _padded_batch(
    lm: LoadedModel, batch: Sequence[_Encoded], starts: Sequence[int] | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, list[int]]:
    """(ids, attention, where to keep logits, target ids) of one right-padded batch; each passage's
    tokens from ``starts[i]`` on (all of them by default) are the targets."""
    sequences = [e.context + e.ids for e in batch]
    width = max(len(s) for s in sequences)
    input_ids = torch.full((len(batch), width), lm.pad_token_id, dtype=torch.long)
    attention = torch.zeros((len(batch), width), dtype=torch.long)
    keep = torch.zeros((len(batch), width), dtype=torch.bool)
    targets = []
    for row, (seq, enc) in enumerate(zip(sequences, batch)):
        input_ids[row, : len(seq)] = torch.tensor(seq)
        attention[row, : len(seq)] = 1
        # Token at position p is predicted by the logits at p-1.
        first = len(enc.context) + (starts[row] if starts is not None else 0)
        keep[row, first - 1 : len(seq) - 1] = True
        targets.extend(seq[first:])
    return input_ids, attention, keep, targets


@torch.inference_mode()
def target_logprobs(
    lm: ScoringModel,
    encoded: Sequence[_Encoded],
    starts: Sequence[int],
    *,
    token_budget: int = DEFAULT_TOKEN_BUDGET,
    progress: ProgressCallback | None = None,
) -> list[np.ndarray]:
    """log p(x_i | x_<i) of each passage's tokens from ``starts[i]`` on: the cheapest pass that gives them.

    For a loss alone (the loss-delta test) nothing else is needed: logits only where a wanted token is
    predicted, one gather and one log-sum-exp per position; no distribution statistics (μ, σ, rank) and
    no k-gram windows. Values equal ``score_texts``'s ``logprobs`` up to float rounding (same batches and
    arithmetic; the vocabulary projection runs on fewer rows): within 10⁻⁶ nats per solution loss here.
    """
    return lm.visit(
        lambda here: loaded_target_pass(here, encoded, starts, token_budget, progress),
        lambda server: served_target_pass(server, encoded, starts, progress),
    )


def loaded_passage_pass(
    lm: LoadedModel, batch: Sequence[_Encoded], kgram_max: int, token_budget: int
) -> tuple[list[tuple[np.ndarray, ...]], list[np.ndarray] | None]:
    """In process: one padded forward pass, and the k-gram windows when ``kgram_max``."""
    kgrams = _score_kgram_windows(lm, batch, kgram_max, token_budget) if kgram_max else None
    return _score_full(lm, batch), kgrams


@torch.inference_mode()
def loaded_target_pass(
    lm: LoadedModel,
    encoded: Sequence[_Encoded],
    starts: Sequence[int],
    token_budget: int,
    progress: ProgressCallback | None,
) -> list[np.ndarray]:
    """In process: logits only where a wanted token is predicted (see ``target_logprobs``)."""
    results: list[np.ndarray] = [np.empty(0)] * len(encoded)
    done = 0
    for batch in length_batches([len(e.context) + len(e.ids) for e in encoded], token_budget):
        input_ids, attention, keep, targets = _padded_batch(lm, [encoded[i] for i in batch], [starts[i] for i in batch])
        logits = _logits_at(lm, input_ids, attention, keep)
        target_ids = torch.tensor(targets, device=logits.device)
        picked = logits.gather(1, target_ids[:, None])[:, 0] - torch.logsumexp(logits, dim=-1)
        values, lo = picked.double().cpu().numpy(), 0
        for index in batch:
            n = len(encoded[index].ids) - starts[index]
            results[index] = values[lo : lo + n]
            lo += n
        done += len(batch)
        if progress is not None:
            progress(done, len(encoded))
    return results


@torch.inference_mode()
def _score_full(lm: LoadedModel, batch: Sequence[_Encoded]) -> list[tuple[np.ndarray, ...]]:
    """One padded forward pass; per passage: log-prob, μ, σ, entropy and rank of each scored token."""
    input_ids, attention, keep, targets = _padded_batch(lm, batch)
    logits = _logits_at(lm, input_ids, attention, keep)
    target_ids = torch.tensor(targets, device=logits.device)
    parts = [
        _distribution_stats(logits[lo : lo + STATS_CHUNK], target_ids[lo : lo + STATS_CHUNK])
        for lo in range(0, logits.shape[0], STATS_CHUNK)
    ]
    stats = [np.concatenate(column) for column in zip(*parts)]
    out, lo = [], 0
    for enc in batch:
        out.append(tuple(column[lo : lo + len(enc.ids)] for column in stats))
        lo += len(enc.ids)
    return out


def _distribution_stats(step_logits: torch.Tensor, targets: torch.Tensor) -> tuple[np.ndarray, ...]:
    """Target log-prob, μ, σ, entropy and rank per row, with few passes over the vocabulary-sized rows.

    The expectations are row-wise dot products (batched matmuls, no product temporaries), and the
    centred square is formed in place; this step is memory-bound, so passes are what cost time. The fused
    ``log_softmax`` and ``softmax`` kernels beat a separate log-sum-exp, subtraction and ``exp``, and counting
    the higher tokens in int32 beats the default int64 sum (together 1.45 times faster on one CPU thread,
    ``bench/distribution_stats.py``; a rank moves only where two log-probs tie within float rounding).
    """
    log_p = torch.log_softmax(step_logits, dim=-1)
    target_lp = log_p.gather(1, targets[:, None])
    rank = (log_p > target_lp).sum(-1, dtype=torch.int32) + 1
    p = torch.softmax(step_logits, dim=-1)
    mu = torch.bmm(p[:, None, :], log_p[:, :, None])[:, 0, 0]
    # Centred form: E[log p²] − μ² cancels catastrophically in float32 for flat distributions.
    centred_sq = log_p.sub_(mu[:, None]).square_()
    sigma = torch.bmm(p[:, None, :], centred_sq[:, :, None])[:, 0, 0].clamp_min(0).sqrt()
    as_np = lambda t: t.double().cpu().numpy()  # noqa: E731
    return as_np(target_lp[:, 0]), as_np(mu), as_np(sigma), as_np(-mu), rank.cpu().numpy().astype(np.int64)


@torch.inference_mode()
def _score_kgram_windows(
    lm: LoadedModel, batch: Sequence[_Encoded], kgram_max: int, token_budget: int
) -> list[np.ndarray]:
    """Context-limited log-probs for k = 1..kgram_max, all from one set of windows.

    The window starting at token j is ``[start, x_j, ..., x_{j+K-2}]``; its position m predicts x_{j+m}
    from exactly m previous tokens, i.e. the (m+1)-gram log-prob of token j+m. So n windows of length K
    yield every k ≤ K for every token: n·K tokens of compute instead of one pass per token and k.
    Position 0 (context = the start token alone, k = 1) is the same in every window, so its
    distribution is computed once. Entries whose window would start before the passage are left NaN
    and filled by the caller.
    """
    K = kgram_max
    windows, targets = [], []
    for enc in batch:
        ids = np.asarray(enc.ids, dtype=np.int64)
        n = len(ids)
        # Row j holds x_j..x_{j+K-1} (−1 past the end); the window input drops its last entry.
        follow = np.full((n, K), -1, dtype=np.int64)
        for m in range(K):
            follow[: max(0, n - m), m] = ids[m:]
        inputs = np.concatenate([np.full((n, 1), lm.start_token_id), follow[:, : K - 1]], axis=1)
        windows.append(np.where(inputs < 0, lm.pad_token_id, inputs))
        targets.append(follow)
    all_windows = torch.from_numpy(np.concatenate(windows))
    all_targets = torch.from_numpy(np.concatenate(targets))
    values = np.full(all_targets.shape, np.nan)
    start_only = torch.tensor([[lm.start_token_id]])
    unigram = torch.log_softmax(_logits_at(lm, start_only, None, torch.ones_like(start_only, dtype=torch.bool))[0], -1)
    values[:, 0] = unigram.double().cpu().numpy()[all_targets[:, 0].numpy()]
    if K > 1:
        per_chunk = max(1, token_budget // K)
        for lo in range(0, all_windows.shape[0], per_chunk):
            chunk = all_windows[lo : lo + per_chunk]
            wanted = all_targets[lo : lo + per_chunk]
            keep = wanted >= 0
            keep[:, 0] = False
            if not keep.any():
                continue
            # Padding sits only at the right end of windows, so the causal mask keeps it out of the way.
            logits = _logits_at(lm, chunk, None, keep)
            picked = wanted[keep].to(logits.device)
            lp = logits.gather(1, picked[:, None])[:, 0] - torch.logsumexp(logits, dim=-1)
            block = values[lo : lo + chunk.shape[0]]
            block[keep.numpy()] = lp.double().cpu().numpy()
    results, row = [], 0
    for enc in batch:
        n = len(enc.ids)
        results.append(windows_to_grid(values[row : row + n]))
        row += n
    return results


def _fill_short_contexts(kgram: np.ndarray) -> np.ndarray:
    """Tokens with fewer than k−1 predecessors: their k-gram context is the whole passage prefix.

    That context is exactly what the window starting at token 0 sees at position i, i.e. the
    (i+1)-gram value ``kgram[i, i]``, so no extra pass is needed (and a ReCaLL prefix never leaks in).
    """
    filled = kgram.copy()
    K, n = filled.shape
    for i in range(min(K - 1, n)):
        filled[i + 1 :, i] = filled[i, i]
    return filled


@torch.inference_mode()
def loaded_alternatives_pass(
    lm: LoadedModel,
    sequences: Sequence[Sequence[int]],
    k: int,
    token_budget: int,
    progress: ProgressCallback | None,
) -> list[np.ndarray]:
    """In process: per sequence, (tokens after the first, k) ids of the model's k likeliest
    tokens at each of those positions, best first."""
    out: list[np.ndarray | None] = [None] * len(sequences)
    done = 0
    for batch in length_batches([len(s) for s in sequences], token_budget):
        width = max(len(sequences[i]) for i in batch)
        input_ids = torch.full((len(batch), width), lm.pad_token_id, dtype=torch.long)
        attention = torch.zeros((len(batch), width), dtype=torch.long)
        for row, index in enumerate(batch):
            seq = sequences[index]
            input_ids[row, : len(seq)] = torch.tensor(list(seq))
            attention[row, : len(seq)] = 1
        logits = lm.model(
            input_ids=input_ids.to(lm.device), attention_mask=attention.to(lm.device), use_cache=False
        ).logits
        for row, index in enumerate(batch):
            n = len(sequences[index]) - 1
            # Token i sits at sequence position i + 1, so the logits at position i predict it.
            out[index] = logits[row, :n].float().topk(k, dim=-1).indices.cpu().numpy()
        done += len(batch)
        if progress is not None:
            progress(done, len(sequences))
    return [o for o in out if o is not None]
