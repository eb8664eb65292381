"""Token trees packed into rows: one forward pass for many short sequences that share starts, no padding.

A tree is a stem and the branches that continue it (the question text of an MCQ item, and its rendering
with the original and with the shuffled options). Each row of a pass holds several trees side by side; a
custom attention mask lets each token see only the tokens before it on its own path (its stem, then its
own branch), and position ids restart with every tree, so every path gets the logits, keys and values of
running it alone. Padding a batch of unequal sequences costs a whole forward pass per padded token;
packing fills the rows instead (the work it saves is measured in docs/benchmarks.md, MCQ probe speed).

Whether a model honours such a mask depends on its attention code (a FlashAttention kernel, for one,
ignores it), so ``honours_packed_masks`` checks it on the model itself before callers rely on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import torch

from core.engine.batching import length_batches
from core.engine.generation import CachedPrefix, greedy_picks
from core.engine.models import LoadedModel, model_fact
from core.engine.scoring import forward_kept

ROW_TOKENS = 384
"""Tokens packed per row. Every token of a row scores against the whole row (the mask only zeroes what it
may not see), so long rows spend time on attention they throw away; 384 was the fastest of the row sizes
measured (docs/benchmarks.md, MCQ probe speed)."""


@dataclass(frozen=True)
class TokenTree:
    """A stem and the branches that continue it; each path is the stem followed by one branch."""

    stem: tuple[int, ...]
    branches: tuple[tuple[int, ...], ...]
    """A branch may be empty: its path is the stem alone."""
    keep: tuple[tuple[int, ...], ...]
    """Per branch, the positions of its path whose greedy next token is wanted."""

    @property
    def size(self) -> int:
        return len(self.stem) + sum(len(b) for b in self.branches)


Greedy = dict[int, tuple[int, float]]
"""Path position -> (greedy next token there, its log-prob)."""


def run_packed_trees(
    lm: LoadedModel, trees: Sequence[TokenTree], token_budget: int, *, row_tokens: int = ROW_TOKENS
) -> list[list[tuple[CachedPrefix, Greedy]]]:
    """Per tree, per branch: the path's keys and values (views into the pass's cache) and its greedy tokens.

    Trees are packed first-fit, largest first, into rows of ``row_tokens`` (a larger tree gets a row of its
    own), and rows are batched so that rows × widest row stays within ``token_budget``.
    """
    results: list[list[tuple[CachedPrefix, Greedy]]] = [[] for _ in trees]
    rows = _pack(trees, row_tokens)
    widths = [sum(trees[t].size for t in row) for row in rows]
    for batch in length_batches(widths, token_budget):
        chosen = [rows[i] for i in batch]
        for tree_index, paths in zip(
            [t for row in chosen for t in row], _run_rows(lm, [[trees[t] for t in row] for row in chosen])
        ):
            results[tree_index] = paths
    return results


def _pack(trees: Sequence[TokenTree], row_tokens: int) -> list[list[int]]:
    rows: list[list[int]] = []
    room: list[int] = []
    for t in sorted(range(len(trees)), key=lambda i: -trees[i].size):
        size = trees[t].size
        fit = next((r for r, left in enumerate(room) if size <= left), None)
        if fit is None:
            rows.append([t])
            room.append(max(0, row_tokens - size))
        else:
            rows[fit].append(t)
            room[fit] -= size
    return rows


@torch.inference_mode()
def _run_rows(lm: LoadedModel, rows: Sequence[Sequence[TokenTree]]) -> list[list[tuple[CachedPrefix, Greedy]]]:
    """One pass over the packed rows; the trees' results in row order."""
    width = max(sum(tree.size for tree in row) for row in rows)
    input_ids = torch.full((len(rows), width), lm.pad_token_id, dtype=torch.long)
    positions = torch.zeros((len(rows), width), dtype=torch.long)
    sees = torch.zeros((len(rows), width, width), dtype=torch.bool)
    keep = torch.zeros((len(rows), width), dtype=torch.bool)
    placed: list[tuple[int, TokenTree, int, list[int]]] = []  # row, tree, stem column, branch columns
    for r, row in enumerate(rows):
        at = 0
        for tree in row:
            stem_at, n = at, len(tree.stem)
            _place(input_ids, positions, sees, r, at, tree.stem, 0)
            at += n
            branch_at = []
            for branch, wanted in zip(tree.branches, tree.keep, strict=True):
                _place(input_ids, positions, sees, r, at, branch, n)
                sees[r, at : at + len(branch), stem_at : stem_at + n] = True
                for i in wanted:
                    keep[r, _column(i, n, stem_at, at)] = True
                branch_at.append(at)
                at += len(branch)
            placed.append((r, tree, stem_at, branch_at))
        pad = torch.arange(at, width)
        sees[r, pad, pad] = True  # padding sees itself: no empty softmax rows
    mask = torch.zeros(sees.shape, dtype=lm.model.dtype).masked_fill_(~sees, torch.finfo(lm.model.dtype).min)
    inputs = {"input_ids": input_ids, "attention_mask": mask[:, None], "position_ids": positions}
    logits, cache = forward_kept(lm, keep, **{k: v.to(lm.device) for k, v in inputs.items()}, use_cache=True)
    tokens, logprobs = greedy_picks(logits)
    kept_at = {(int(r), int(c)): k for k, (r, c) in enumerate(keep.nonzero().tolist())}
    layers = tuple((layer.keys, layer.values) for layer in cache.layers)
    out = []
    for r, tree, stem_at, branch_at in placed:
        n = len(tree.stem)
        paths = []
        for branch, wanted, at in zip(tree.branches, tree.keep, branch_at, strict=True):
            spans = [(stem_at, stem_at + n)] + ([(at, at + len(branch))] if branch else [])
            greedy = {}
            for i in wanted:
                k = kept_at[(r, _column(i, n, stem_at, at))]
                greedy[i] = (tokens[k], logprobs[k])
            paths.append((CachedPrefix.of_row(layers, r, spans), greedy))
        out.append(paths)
    return out


def _column(position: int, stem_length: int, stem_at: int, branch_at: int) -> int:
    """The row column of a path position: in the stem, else in the branch that follows it."""
    return stem_at + position if position < stem_length else branch_at + position - stem_length


def _place(
    input_ids: torch.Tensor,
    positions: torch.Tensor,
    sees: torch.Tensor,
    row: int,
    at: int,
    tokens: Sequence[int],
    first_position: int,
) -> None:
    """Tokens at columns ``at...`` of ``row``, each seeing itself and those before it in the run."""
    n = len(tokens)
    if n == 0:
        return
    input_ids[row, at : at + n] = torch.tensor(list(tokens), dtype=torch.long)
    positions[row, at : at + n] = torch.arange(first_position, first_position + n)
    sees[row, at : at + n, at : at + n] = torch.ones((n, n), dtype=torch.bool).tril_()


def honours_packed_masks(lm: LoadedModel) -> bool:
    """Whether two short sequences packed in one row get the greedy tokens and log-probs of running each alone
    (within rounding: a model that ignores the mask lets the second see the first, and moves far more)."""
    return model_fact(lm, "honours_packed_masks", _check_packed_masks)


def _check_packed_masks(lm: LoadedModel) -> bool:
    # Typed nn.Module by transformers; the input embeddings are an nn.Embedding (or a subclass) in every model.
    vocab = cast(torch.nn.Embedding, lm.model.get_input_embeddings()).num_embeddings
    sequences = [(lm.start_token_id, *(t % vocab for t in ids)) for ids in ((17, 4242, 91), (1234, 56))]
    trees = [TokenTree(seq, ((),), (tuple(range(len(seq))),)) for seq in sequences]
    tolerance = 1e-3 if lm.model.dtype == torch.float32 else 3e-2
    try:
        packed = _run_rows(lm, [trees])
    except (TypeError, ValueError, RuntimeError):
        return False
    with torch.inference_mode():
        for seq, paths in zip(sequences, packed, strict=True):
            tokens, logprobs = greedy_picks(lm.model(input_ids=torch.tensor([seq], device=lm.device)).logits[0].float())
            for i, (token, logprob) in paths[0][1].items():
                if token != tokens[i] or abs(logprob - logprobs[i]) > tolerance:
                    return False
    return True
