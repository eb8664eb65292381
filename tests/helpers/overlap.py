"""Token-level checks over ``core.overlap.tokenize`` that only tests need."""

from __future__ import annotations

from collections.abc import Sequence

from core.overlap.tokenize import joined


def contains_phrase(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    """True when ``needle`` occurs contiguously in ``haystack`` (token-wise)."""
    if not needle:
        return False
    return f" {joined(needle)} " in f" {joined(haystack)} "
