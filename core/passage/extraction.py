"""What a reader is shown of an extraction: the prompt, the true and the generated continuation, aligned."""

from __future__ import annotations

from dataclasses import dataclass

from core.engine.model_source import ScoringModel, decode, decode_complete
from core.engine.records import TokenRecords, scored_text
from core.methods.extraction import Continuation


@dataclass(frozen=True)
class ExtractionView:
    """What a reader is shown: the prompt's text, then the true and the generated continuation, token by token."""

    prompt: str
    truth_pieces: tuple[str, ...]
    generated_pieces: tuple[str, ...]
    matched: tuple[bool, ...]
    prompt_words: int
    leading_words: int
    """Words of the passage the model reproduced exactly from the start of the continuation."""


def _pieces_in_context(lm: ScoringModel, context: list[int], generated: tuple[int, ...]) -> tuple[str, ...]:
    """The text each generated token adds after the prompt, decoded together with it: a character split over
    tokens (or over the prompt's end) appears once, with the token that completes it."""
    pieces: list[str] = []
    before = decode_complete(lm, context)
    ids = list(context)
    for token in generated:
        if token < 0:  # the context ran out before this position
            break
        ids.append(token)
        after = decode_complete(lm, ids)
        pieces.append(after[len(before) :] if after.startswith(before) else decode(lm, [token]))
        before = after if after.startswith(before) else before + pieces[-1]
    return tuple(pieces)


def extraction_view(lm: ScoringModel, records: TokenRecords, extraction: Continuation) -> ExtractionView:
    """The texts to align on screen. Passage pieces are cut from the passage by character offsets; the
    model's pieces are decoded in context (each the text its token adds), so merges and accents stay right."""
    text = scored_text(records)
    offsets = records.offsets
    start = int(offsets[extraction.prefix_tokens][0]) if extraction.prefix_tokens < records.n_tokens else len(text)
    prompt = text[:start]
    end = extraction.prefix_tokens + extraction.length
    truth_pieces = tuple(
        text[int(offsets[i][0]) : int(offsets[i + 1][0]) if i + 1 < records.n_tokens else int(offsets[i][1])]
        for i in range(extraction.prefix_tokens, end)
    )
    pieces = _pieces_in_context(lm, records.token_ids[: extraction.prefix_tokens].tolist(), extraction.generated_ids)
    leading_text = "".join(truth_pieces[: extraction.leading])
    return ExtractionView(
        prompt=prompt,
        truth_pieces=truth_pieces,
        generated_pieces=tuple(pieces),
        matched=extraction.matched,
        prompt_words=len(prompt.split()),
        leading_words=len(leading_text.split()),
    )
