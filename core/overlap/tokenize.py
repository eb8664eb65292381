"""Word tokens and n-grams: the unit every overlap score counts.

A token is a maximal run of Unicode word characters, lower-cased. Both backends and the brute-force
check use this one function, so "the same n-gram" means the same thing everywhere.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

_WORD = re.compile(r"\w+")


def word_tokens(text: str) -> list[str]:
    """Lower-cased word tokens of ``text``."""
    return [m.group().lower() for m in _WORD.finditer(text)]


def word_spans(text: str) -> list[tuple[int, int]]:
    """Character spans ``(start, end)`` of the tokens of ``word_tokens(text)``, in order."""
    return [m.span() for m in _WORD.finditer(text)]


def ngrams(tokens: Sequence[str], n: int) -> list[tuple[str, ...]]:
    """All contiguous n-grams; a sequence shorter than ``n`` (but not empty) is one whole-text gram."""
    if n < 1:
        raise ValueError("n-gram size must be at least 1")
    if not tokens:
        return []
    if len(tokens) < n:
        return [tuple(tokens)]
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def gram_hash(gram: Sequence[str]) -> int:
    """A stable signed 64-bit hash of an n-gram (SQLite INTEGER range), the same in every process."""
    digest = hashlib.blake2b(" ".join(gram).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def joined(tokens: Sequence[str]) -> str:
    """Tokens joined by single spaces: the form stored for phrase lookups."""
    return " ".join(tokens)
