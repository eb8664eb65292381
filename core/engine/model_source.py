"""The two model sources behind one interface: a model loaded in this process, or one behind a server.

Tests that build prompts token by token (the multiple-choice probes, the option-order test) turn text
into ids and back through these functions instead of a tokenizer, so they run on either source; a
served model answers with its own tokenizer (the server's ``/tokenize`` and ``/detokenize``, or the
local tokenizer named with ``--tokenizer``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import cast

from core.engine.capabilities import ALL_CAPABILITIES, exclusion_note, unmet
from core.engine.models import LoadedModel
from core.engine.served import ServedModel, ServedModelError

REPLACEMENT = "\ufffd"
"""What a decoder shows for the first bytes of a character whose last byte is in a later token."""

ScoringModel = LoadedModel | ServedModel
"""A model source the tests read: loaded in this process, or behind a server."""


def capabilities_of(model: ScoringModel) -> frozenset[str]:
    """What the source computes: everything in this process, what the server returns behind one."""
    return model.capabilities if isinstance(model, ServedModel) else ALL_CAPABILITIES


def require_capabilities(model: ScoringModel, what: str, needs: Iterable[str]) -> None:
    """Refuse, before any work, a test whose needs the source cannot meet (one line, naming them)."""
    missing = unmet(needs, capabilities_of(model))
    if missing and isinstance(model, ServedModel):
        raise ServedModelError(exclusion_note(what, missing, model.source_label).replace(": left out.", "."))


def encode(model: ScoringModel, text: str) -> list[int]:
    """The ids of ``text`` without special tokens."""
    if isinstance(model, ServedModel):
        return model.tokenize(text)[0]
    return list(model.tokenizer(text, add_special_tokens=False)["input_ids"])


def encode_with_offsets(model: ScoringModel, text: str) -> tuple[list[int], list[tuple[int, int]]]:
    """(ids, character offsets) of ``text`` without special tokens."""
    if isinstance(model, ServedModel):
        return model.tokenize(text)
    tok = model.tokenizer
    if getattr(tok, "is_fast", False):
        enc = tok(text, add_special_tokens=False, return_offsets_mapping=True)
        return list(enc["input_ids"]), [(int(s), int(e)) for s, e in enc["offset_mapping"]]
    # Slow tokenizers have no offsets: recover them by decoding growing prefixes.
    ids = list(tok(text, add_special_tokens=False)["input_ids"])
    offsets, previous = [], 0
    for i in range(len(ids)):
        end = min(len(text), len(tok.decode(ids[: i + 1])))
        offsets.append((previous, max(previous, end)))
        previous = max(previous, end)
    return ids, offsets


def decode(model: ScoringModel, ids: Sequence[int]) -> str:
    """The text of ``ids``, spaces exactly as the tokens spell them (no clean-up)."""
    if isinstance(model, ServedModel):
        return model.detokenize(ids)
    # One flat list of ids decodes to one string (transformers types the result str | list[str]).
    return cast(str, model.tokenizer.decode(list(ids), clean_up_tokenization_spaces=False))


def decode_complete(model: ScoringModel, ids: Sequence[int]) -> str:
    """Decoded ids without a trailing partial character (byte-level tokens may split a character)."""
    return decode(model, ids).rstrip(REPLACEMENT)
