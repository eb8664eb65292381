"""Neighbour texts for the neighbourhood comparison: the passage with a few words swapped.

Scheme (needs no second model and no download): one extra batched forward pass over each passage gives
the target model's most likely next tokens at every position. A word is *eligible* when its first token
has a top-10 alternative that is itself a whole word start: the same leading whitespace as the original
token followed by letters only, and a different word. Each neighbour replaces ``fraction`` of the
eligible words (at least one), chosen at random, by that best alternative; the rest of the text stays
byte-for-byte the same. Alternatives are read with the original left context, so a neighbour is what
the model itself finds a plausible rewording, not random noise. A word is a run of letters that is not
glued to digits; "fraction" counts all such words of the passage, and is capped by how many are eligible.

Determinism: word choice uses a generator seeded by (seed, sha256 of the passage), so a passage gets the
same neighbours whatever dataset, batch or order it comes in. A passage with no eligible word (e.g. no
letters) gets copies of itself, which contribute zero to the neighbourhood score.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.engine.model_source import ScoringModel, decode
from core.engine.progress import ProgressCallback
from core.engine.records import TokenRecords, scored_text
from core.engine.scoring import DEFAULT_TOKEN_BUDGET, loaded_alternatives_pass
from core.engine.served import ALTERNATIVES_PER_POSITION, ServedModel

TOP_ALTERNATIVES = ALTERNATIVES_PER_POSITION
"""How many of the model's most likely tokens are searched for a usable replacement."""
_WORD = re.compile(r"(?<!\w)[^\W\d_]+(?!\w)")
"""A run of letters standing alone (so the "st" of "41st" or the "B" of "B12" is not a word)."""


@dataclass(frozen=True)
class WordSlot:
    """A word that can be swapped: its character span (with leading whitespace) and its replacement."""

    start: int
    end: int
    original: str
    replacement: str


def top_alternatives(
    lm: ScoringModel,
    records: Sequence[TokenRecords],
    *,
    k: int = TOP_ALTERNATIVES,
    token_budget: int = DEFAULT_TOKEN_BUDGET,
    progress: ProgressCallback | None = None,
) -> list[np.ndarray]:
    """(n_tokens, k) ids of the model's k most likely tokens at each scored position, best first.

    Row i is the distribution the model predicts token i from (start token + tokens before i), read
    from the same token ids the records hold, so positions line up with ``records.offsets``.
    """
    sequences = [[lm.start_token_id, *r.token_ids.tolist()] for r in records]
    return lm.visit(
        lambda here: loaded_alternatives_pass(here, sequences, k, token_budget, progress),
        lambda server: _served_alternatives(server, sequences, k, progress),
    )


def _served_alternatives(
    served: ServedModel, sequences: list[list[int]], k: int, progress: ProgressCallback | None
) -> list[np.ndarray]:
    alternatives = served.top_alternatives(sequences, k)
    if progress is not None:
        progress(len(sequences), len(sequences))
    return alternatives


class _Decoder:
    """Token id -> text, memoised (the same few thousand ids recur across a dataset)."""

    def __init__(self, lm: ScoringModel) -> None:
        self.lm = lm
        self.cache: dict[int, str] = {}

    def __call__(self, token_id: int) -> str:
        text = self.cache.get(token_id)
        if text is None:
            text = decode(self.lm, [token_id])
            self.cache[token_id] = text
        return text


def count_words(text: str) -> int:
    return sum(1 for _ in _WORD.finditer(text))


def word_slots(records: TokenRecords, alternatives: np.ndarray, decode) -> list[WordSlot]:
    """Every eligible word of the scored text with the model's best whole-word replacement."""
    text = scored_text(records)
    starts, ends = records.offsets[:, 0], records.offsets[:, 1]
    slots: list[WordSlot] = []
    used_tokens: set[int] = set()
    for match in _WORD.finditer(text):
        i = int(np.searchsorted(starts, match.start(), side="right")) - 1
        if i < 0 or ends[i] <= match.start() or i in used_tokens:
            continue
        lead = text[int(starts[i]) : match.start()]
        if lead.strip():  # the token also holds non-space characters before the word
            continue
        word = match.group()
        for candidate in alternatives[i]:
            if int(candidate) == int(records.token_ids[i]):
                continue
            piece = decode(int(candidate))
            letters = piece[len(lead) :]
            if piece.startswith(lead) and letters.isalpha() and letters.lower() != word.lower():
                slots.append(WordSlot(int(starts[i]), match.end(), text[int(starts[i]) : match.end()], piece))
                used_tokens.add(i)
                break
    return slots


def passage_rng(text: str, seed: int) -> np.random.Generator:
    digest = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
    return np.random.default_rng([seed, digest])


def build_neighbours(
    text: str, slots: Sequence[WordSlot], n_neighbours: int, fraction: float, seed: int
) -> tuple[str, ...]:
    """``n_neighbours`` copies of ``text``, each with ``fraction`` of its words swapped (seeded choice of slots)."""
    if not slots:
        return (text,) * n_neighbours
    rng = passage_rng(text, seed)
    count = min(len(slots), max(1, round(fraction * count_words(text))))
    neighbours = []
    for _ in range(n_neighbours):
        chosen = sorted(rng.choice(len(slots), count, replace=False))
        pieces, cursor = [], 0
        for index in chosen:
            slot = slots[index]
            pieces += [text[cursor : slot.start], slot.replacement]
            cursor = slot.end
        pieces.append(text[cursor:])
        neighbours.append("".join(pieces))
    return tuple(neighbours)


def generate_neighbours(
    lm: ScoringModel,
    records: Sequence[TokenRecords],
    *,
    n_neighbours: int = 5,
    fraction: float = 0.15,
    seed: int = 0,
    token_budget: int = DEFAULT_TOKEN_BUDGET,
    progress: ProgressCallback | None = None,
) -> list[tuple[str, ...]]:
    """Neighbour texts for every passage (one extra batched forward pass over the passages)."""
    alternatives = top_alternatives(lm, records, token_budget=token_budget, progress=progress)
    decoder = _Decoder(lm)
    return [
        build_neighbours(scored_text(r), word_slots(r, alt, decoder), n_neighbours, fraction, seed)
        for r, alt in zip(records, alternatives, strict=True)
    ]
