"""Probe continuations from one pass per question rendering: the fast path of the MCQ probes.

Every probe's context (start token + the in-context tokens that end at or before its cut, see
``core.mcq.probes``) is the start of its question's full rendering tokenized once: for a cut inside a
token, the context stops before the token that spans the cut, so it is still a start of the rendering
and needs no tail of its own. Hence:

- one pass over the rendering gives every option's next-token logits, at the position before its cut;
- greedy decoding follows the rendering for free while it agrees with it (fed the rendering's own next
  token, the model's next logits are that pass's logits one position on); at the first disagreement it
  continues from the pass's keys and values cut there, so only the remaining decoding steps run;
- the renderings of one question (original and shuffled options) share the question text: it runs once,
  each rendering's rest seeing it (one token tree per question, trees packed into rows without padding,
  ``core.engine.packing``; for a model whose attention ignores packing masks, the shared start runs
  first and each rendering's rest after its keys and values, in padded batches).

Passes are batched across questions. A probe whose context is not the start of its rendering (a
tokenizer that splits the rendering differently, a context cut to fit the model), a rendering longer
than the context, and a model whose cache cannot be laid out again take the per-probe path
(``greedy_generate``). Either way a probe gets the greedy tokens of its own context.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.engine.batching import length_batches, split_by_extent
from core.engine.generation import (
    DEFAULT_GENERATION_BUDGET,
    EMPTY_PREFIX,
    CachedPrefix,
    Generation,
    generation_room,
    greedy_after_prefixes,
    greedy_generate,
    greedy_picks,
    reusable_cache_bytes,
    run_after_prefixes,
    shared_prefix_length,
)
from core.engine.models import LoadedModel
from core.engine.packing import Greedy, TokenTree, honours_packed_masks, run_packed_trees
from core.engine.progress import ProgressCallback, offset_progress

CHUNK_BYTES = 1 << 30
"""Keys and values of the renderings handled at once (1 GiB): one chunk's decoding rows batch together,
and the fuller its batches, the fewer decoding steps (each reads every weight once)."""
CPU_PASS_TOKENS = 1024
"""Padded tokens per rendering pass on a CPU (within the token budget): a smaller pass keeps its
activations in the processor's cache, which is faster than one large pass (docs/benchmarks.md, MCQ probe
speed)."""
DECODE_BUDGETS = 4
"""Keys and values laid out per decoding batch, in token budgets: a decoding step holds no activations
of a prefill, so its rows can be many (each step reads every weight once, whatever the rows)."""


@dataclass(frozen=True)
class RenderingPrompts:
    """One rendered question and the prompts (its probes' contexts) to continue greedily."""

    group: int
    """Renderings of one question share a group: their common start (the question text) runs once."""
    ids: tuple[int, ...]
    """Start token + the tokens of the whole rendering."""
    prompts: tuple[tuple[int, ...], ...]
    counts: tuple[int, ...]
    """Tokens to generate per prompt (as asked of ``greedy_generate``)."""


def generate_along_renderings(
    lm: LoadedModel,
    renderings: Sequence[RenderingPrompts],
    *,
    token_budget: int = DEFAULT_GENERATION_BUDGET,
    progress: ProgressCallback | None = None,
    packed: bool | None = None,
) -> list[list[Generation]]:
    """``greedy_generate`` of every rendering's prompts, computed along the renderings (module docstring).

    ``packed``: run each question's renderings as one token tree packed with others into rows
    (``core.engine.packing``), or else its shared start first and each rendering's rest after it, padded;
    by default packed when the model honours packing masks. Both give every probe the same tokens.
    """
    results: list[list[Generation | None]] = [[None] * len(r.prompts) for r in renderings]
    total = sum(len(r.prompts) for r in renderings)
    per_token = reusable_cache_bytes(lm)
    fast = per_token is not None
    if packed is None:
        packed = fast and honours_packed_masks(lm)
    slow: list[tuple[int, int]] = []
    done = 0
    for chunk in _chunks(renderings, CHUNK_BYTES // (per_token or 1)):
        plans: dict[int, list[int]] = {}
        for r in chunk:
            rendering = renderings[r]
            for p, prompt in enumerate(rendering.prompts):
                if fast and len(rendering.ids) <= lm.max_context and _starts(rendering.ids, prompt):
                    plans.setdefault(r, []).append(p)
                else:
                    slow.append((r, p))
        _run_chunk(lm, renderings, plans, results, token_budget, packed)
        done += sum(len(p) for p in plans.values())
        if progress is not None:
            progress(done, total)
    if slow:
        generations = greedy_generate(
            lm,
            [renderings[r].prompts[p] for r, p in slow],
            [renderings[r].counts[p] for r, p in slow],
            token_budget=token_budget,
            progress=offset_progress(progress, done, total),
        )
        for (r, p), generation in zip(slow, generations, strict=True):
            results[r][p] = generation
    return [[g for g in row if g is not None] for row in results]


def _starts(ids: Sequence[int], prompt: Sequence[int]) -> bool:
    return 0 < len(prompt) <= len(ids) and tuple(ids[: len(prompt)]) == tuple(prompt)


def _chunks(renderings: Sequence[RenderingPrompts], budget: int) -> list[list[int]]:
    """Rendering indices in chunks of whole groups, each about ``budget`` rendering tokens.

    Longest groups first, so a chunk's probes have prompts of similar lengths: its decoding batches then
    lay out little padding, which every decoding step would read again.
    """
    groups: dict[int, list[int]] = {}
    for r, rendering in enumerate(renderings):
        groups.setdefault(rendering.group, []).append(r)
    chunks: list[list[int]] = [[]]
    size = 0
    for members in sorted(groups.values(), key=lambda m: -max(len(renderings[r].ids) for r in m)):
        tokens = sum(len(renderings[r].ids) for r in members)
        if chunks[-1] and size + tokens > budget:
            chunks.append([])
            size = 0
        chunks[-1].extend(members)
        size += tokens
    return [c for c in chunks if c]


def _run_chunk(
    lm: LoadedModel,
    renderings: Sequence[RenderingPrompts],
    plans: dict[int, list[int]],
    results: list[list[Generation | None]],
    token_budget: int,
    packed: bool,
) -> None:
    """Passes over the chunk's renderings, then the decoding steps of the probes that leave them."""
    if not plans:
        return
    rooms = {
        r: {p: generation_room(lm, len(renderings[r].prompts[p]), renderings[r].counts[p]) for p in ps}
        for r, ps in plans.items()
    }
    needed = {r: _needed_positions(renderings[r], rooms[r]) for r in plans}
    pass_budget = min(token_budget, CPU_PASS_TOKENS) if lm.device.type == "cpu" else token_budget
    prefixes, best = _rendering_passes(lm, renderings, needed, pass_budget, DECODE_BUDGETS * token_budget, packed)
    pending: list[tuple[int, int, list[int], float]] = []  # probes that leave their rendering
    for r, ps in plans.items():
        for p in ps:
            start = len(renderings[r].prompts[p])
            tokens = _follow_rendering(renderings[r].ids, start, rooms[r][p], best[r])
            first_logprob = best[r][start - 1][1]
            if len(tokens) == rooms[r][p]:
                results[r][p] = Generation(token_ids=tuple(tokens), first_logprob=first_logprob)
            else:
                pending.append((r, p, tokens, first_logprob))
    continued = greedy_after_prefixes(
        lm,
        [prefixes[r].cut(len(renderings[r].prompts[p]) + len(tokens) - 1) for r, p, tokens, _ in pending],
        [tokens[-1] for _, _, tokens, _ in pending],
        [rooms[r][p] - len(tokens) for r, p, tokens, _ in pending],
        token_budget=DECODE_BUDGETS * token_budget,
    )
    for (r, p, tokens, first_logprob), more in zip(pending, continued, strict=True):
        results[r][p] = Generation(token_ids=tuple(tokens) + more, first_logprob=first_logprob)


def _needed_positions(rendering: RenderingPrompts, rooms: dict[int, int]) -> list[int]:
    """Positions whose logits the probes may read: from each cut on, as far as it generates within the rendering."""
    needed: set[int] = set()
    for p, room in rooms.items():
        start = len(rendering.prompts[p])
        needed.update(range(start - 1, min(start - 1 + room, len(rendering.ids))))
    return sorted(needed)


def _follow_rendering(ids: Sequence[int], start: int, room: int, best: Greedy) -> list[int]:
    """Greedy tokens after ``ids[:start]`` read off the rendering's pass while they agree with it."""
    tokens = [best[start - 1][0]]
    while len(tokens) < room and start + len(tokens) - 1 < len(ids) and tokens[-1] == ids[start + len(tokens) - 1]:
        tokens.append(best[start + len(tokens) - 1][0])
    return tokens


def _rendering_passes(
    lm: LoadedModel,
    renderings: Sequence[RenderingPrompts],
    needed: dict[int, list[int]],
    token_budget: int,
    cache_budget: int,
    packed: bool,
) -> tuple[dict[int, CachedPrefix], dict[int, Greedy]]:
    """Each rendering's keys and values and its greedy tokens at the needed positions.

    Packed: each group is a token tree (its common start, then each rendering's rest), trees packed into
    rows. Otherwise first the common start of each group's renderings (batched across groups), then each
    rendering's rest after its group's cached start (batched across renderings).
    """
    groups: dict[int, list[int]] = {}
    for r in needed:
        groups.setdefault(renderings[r].group, []).append(r)
    stems = {g: _stem_length([renderings[r].ids for r in members]) for g, members in groups.items()}
    if packed:
        trees = [
            TokenTree(
                stem=tuple(renderings[members[0]].ids[: stems[g]]),
                branches=tuple(tuple(renderings[r].ids[stems[g] :]) for r in members),
                keep=tuple(tuple(needed[r]) for r in members),
            )
            for g, members in groups.items()
        ]
        ran = run_packed_trees(lm, trees, token_budget)
        prefixes: dict[int, CachedPrefix] = {}
        best: dict[int, Greedy] = {}
        for members, paths in zip(groups.values(), ran, strict=True):
            for r, (prefix, greedy) in zip(members, paths, strict=True):
                prefixes[r], best[r] = prefix, greedy
        return prefixes, best
    stem_rows = [
        (renderings[members[0]].ids[: stems[g]], sorted({i for r in members for i in needed[r] if i < stems[g]}))
        for g, members in groups.items()
    ]
    stem_prefixes, stem_best = _passes(lm, [EMPTY_PREFIX] * len(stem_rows), stem_rows, token_budget, cache_budget)
    by_group = dict(zip(groups, range(len(groups))))
    prefixes, best = {}, {}
    rests = []
    for r in needed:
        g = by_group[renderings[r].group]
        stem = stems[renderings[r].group]
        prefixes[r], best[r] = stem_prefixes[g], dict(stem_best[g])
        if len(renderings[r].ids) > stem:
            rests.append(r)
    rest_rows = []
    for r in rests:
        stem = stems[renderings[r].group]
        rest_rows.append((renderings[r].ids[stem:], sorted(i - stem for i in needed[r] if i >= stem)))
    rest_prefixes, rest_best = _passes(lm, [prefixes[r] for r in rests], rest_rows, token_budget, cache_budget)
    for r, prefix, found in zip(rests, rest_prefixes, rest_best, strict=True):
        stem = stems[renderings[r].group]
        prefixes[r] = prefix
        best[r].update({i + stem: value for i, value in found.items()})
    return prefixes, best


def _stem_length(sequences: Sequence[Sequence[int]]) -> int:
    """A lone rendering runs whole; several share their common start, each keeping a token of its own."""
    if len(sequences) == 1:
        return len(sequences[0])
    return max(1, min(shared_prefix_length(sequences), min(len(s) for s in sequences) - 1))


def _passes(
    lm: LoadedModel,
    prefixes: Sequence[CachedPrefix],
    rows: Sequence[tuple[Sequence[int], Sequence[int]]],
    token_budget: int,
    cache_budget: int,
) -> tuple[list[CachedPrefix], list[Greedy]]:
    """``run_after_prefixes`` in batches; per row, its extended prefix and greedy tokens at kept indices.

    Batched on the tokens each row runs (padding them costs a whole forward pass per padded token), then
    split so the laid-out keys and values stay bounded; a row after a shorter cached prefix only pads
    what attention reads."""
    out_prefixes: list[CachedPrefix | None] = [None] * len(rows)
    out_best: list[Greedy] = [{} for _ in rows]
    spans = [len(tokens) for tokens, _ in rows]
    extents = [p.length + len(tokens) for p, (tokens, _) in zip(prefixes, rows, strict=True)]
    batches = [
        part for batch in length_batches(spans, token_budget) for part in split_by_extent(batch, extents, cache_budget)
    ]
    for batch in batches:
        extended, logits = run_after_prefixes(
            lm, [prefixes[i] for i in batch], [rows[i][0] for i in batch], [rows[i][1] for i in batch]
        )
        tokens, logprobs = greedy_picks(logits)
        at = 0
        for i, prefix in zip(batch, extended, strict=True):
            out_prefixes[i] = prefix
            for position in rows[i][1]:
                out_best[i][position] = (tokens[at], logprobs[at])
                at += 1
    return [p for p in out_prefixes if p is not None], out_best
