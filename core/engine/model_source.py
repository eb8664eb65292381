"""The two model sources behind one interface: a model loaded in this process, or one behind a server.

Both implement the same methods (``capabilities``, ``source_label``, ``device_label``, ``encode``, ``tokenize``,
``detokenize``, ``describe``, ``status_line``), so callers ask the source instead of asking which one it is.

Tests that build prompts token by token (the multiple-choice probes, the option-order test) turn text
into ids and back through these functions instead of a tokenizer, so they run on either source; a
served model answers with its own tokenizer (the server's ``/tokenize`` and ``/detokenize``, or the
local tokenizer named with ``--tokenizer``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from core.engine.capabilities import exclusion_note, unmet
from core.engine.models import LoadedModel
from core.engine.served import ServedModel, ServedModelError

REPLACEMENT = "\ufffd"
"""What a decoder shows for the first bytes of a character whose last byte is in a later token."""

ScoringModel = LoadedModel | ServedModel
"""A model source the tests read: loaded in this process, or behind a server."""


def capabilities_of(model: ScoringModel) -> frozenset[str]:
    """What the source computes: everything in this process, what the server returns behind one."""
    return model.capabilities


def require_capabilities(model: ScoringModel, what: str, needs: Iterable[str]) -> None:
    """Refuse, before any work, a test whose needs the source cannot meet (one line, naming them)."""
    missing = unmet(needs, model.capabilities)
    if missing:
        raise ServedModelError(exclusion_note(what, missing, model.source_label).replace(": left out.", "."))


def encode(model: ScoringModel, text: str) -> list[int]:
    """The ids of ``text`` without special tokens."""
    return model.encode(text)


def encode_with_offsets(model: ScoringModel, text: str) -> tuple[list[int], list[tuple[int, int]]]:
    """(ids, character offsets) of ``text`` without special tokens."""
    return model.tokenize(text)


def decode(model: ScoringModel, ids: Sequence[int]) -> str:
    """The text of ``ids``, spaces exactly as the tokens spell them (no clean-up)."""
    return model.detokenize(ids)


def decode_complete(model: ScoringModel, ids: Sequence[int]) -> str:
    """Decoded ids without a trailing partial character (byte-level tokens may split a character)."""
    return decode(model, ids).rstrip(REPLACEMENT)
