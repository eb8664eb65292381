"""Where each token of a server's tokenization lies in the text, from the token strings it returns.

A server's ``/tokenize`` gives ids and token strings but no character offsets. Token strings spell their
bytes in one of two conventions: byte-level BPE (GPT-2, Llama 3, SmolLM, Qwen: every byte drawn as one
printable character, a space as ``Ġ``) or SentencePiece (Llama 2, Gemma: ``▁`` for a space, ``<0xNN>`` for
a raw byte). Whichever spells the text back exactly places the tokens; if neither does, the caller asks
for the model's tokenizer instead of guessing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache

_RAW_BYTE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


@lru_cache(maxsize=1)
def _byte_level_characters() -> dict[str, int]:
    """Byte-level BPE's drawing of bytes: printable Latin-1 bytes stand for themselves, the other bytes
    are drawn, in order, as the characters from U+0100 on."""
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    drawn = {chr(b): b for b in printable}
    others = [b for b in range(256) if b not in set(printable)]
    drawn.update({chr(0x100 + n): b for n, b in enumerate(others)})
    return drawn


def _byte_level(token: str) -> bytes | None:
    table = _byte_level_characters()
    if not all(c in table for c in token):
        return None
    return bytes(table[c] for c in token)


def _sentencepiece(token: str) -> bytes | None:
    raw = _RAW_BYTE.fullmatch(token)
    if raw:
        return bytes([int(raw.group(1), 16)])
    return token.replace("\u2581", " ").encode("utf-8")


def token_offsets(text: str, token_strs: Sequence[str]) -> list[tuple[int, int]] | None:
    """Character span of each token in ``text``; None when the strings do not spell ``text`` back."""
    target = text.encode("utf-8")
    decoders: tuple[Callable[[str], bytes | None], ...] = (_byte_level, _sentencepiece)
    for decode in decoders:
        pieces = [decode(t) for t in token_strs]
        if any(p is None for p in pieces):
            continue
        spelled = [p for p in pieces if p is not None]
        joined = b"".join(spelled)
        if joined != target and spelled and joined == b" " + target and spelled[0].startswith(b" "):
            spelled[0] = spelled[0][1:]  # SentencePiece's added leading space
            joined = b"".join(spelled)
        if joined == target:
            return _char_spans(text, [len(p) for p in spelled])
    return None


def _char_spans(text: str, byte_lengths: Sequence[int]) -> list[tuple[int, int]]:
    """Byte lengths of consecutive tokens → character spans (a character split across tokens belongs to each)."""
    char_at: list[int] = []  # byte position -> index of the character it belongs to
    for index, char in enumerate(text):
        char_at.extend([index] * len(char.encode("utf-8")))
    spans, position = [], 0
    for length in byte_lengths:
        if length == 0:
            at = char_at[position] if position < len(char_at) else len(text)
            spans.append((at, at))
            continue
        spans.append((char_at[position], char_at[position + length - 1] + 1))
        position += length
    return spans
