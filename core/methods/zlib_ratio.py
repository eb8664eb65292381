"""zlib ratio (Carlini et al. 2021): loss relative to how compressible the text is."""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from core.engine.records import TokenRecords, scored_text
from core.methods.base import AuxiliaryRecords, Method


def zlib_bytes(text: str) -> int:
    """Length in bytes of the zlib-compressed UTF-8 text."""
    return len(zlib.compress(text.encode("utf-8")))


@dataclass(frozen=True)
class ZlibRatio(Method):
    family = "zlib"
    title = "zlib ratio"
    description = (
        "Loss divided by the zlib-compressed size, negated: low surprise that plain repetitiveness "
        "does not explain points to memorisation."
    )

    def score(self, records: TokenRecords, aux: AuxiliaryRecords | None = None) -> float:
        # The compressed size of exactly the text the loss covers: a truncated passage's unscored tail
        # would otherwise shrink the ratio towards zero.
        loss = -float(records.logprobs.mean())
        return -loss / zlib_bytes(scored_text(records))
