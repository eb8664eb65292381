"""The one fingerprint of input data: equal content gives an equal hash however it was loaded.

A stored run is found again by what it was computed on, not by where that came from: a file, its upload
and its hub copy with the same rows match. Every field is length-prefixed, so no two inputs can collide
by moving characters across a field boundary.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence


def fingerprint_rows(rows: Iterable[Sequence[str]]) -> str:
    """sha256 hex digest over rows of text fields, each field length-prefixed."""
    digest = hashlib.sha256()
    for row in rows:
        for field in row:
            data = str(field).encode()
            digest.update(len(data).to_bytes(8, "little"))
            digest.update(data)
    return digest.hexdigest()
