"""Overlap backends behind one interface: ``get_backend("embedded")`` (default) or ``"elasticsearch"``."""

from __future__ import annotations

from pathlib import Path

from core.errors import DataError
from core.overlap.backends.base import Candidates, IndexInfo, IndexWriter, OverlapBackend, StoredDoc, VectorHit

BACKENDS = ("embedded", "elasticsearch")


def get_backend(kind: str = "embedded", *, root: str | Path | None = None, es_url: str | None = None) -> OverlapBackend:
    """``root``: directory of embedded indexes (default ``<cache>/indexes``); ``es_url``: else ``$ES_URL``."""
    if kind == "embedded":
        from core.overlap.backends.embedded import EmbeddedBackend

        return EmbeddedBackend(root)
    if kind in ("elasticsearch", "es"):
        from core.overlap.backends.elastic import ElasticsearchBackend

        return ElasticsearchBackend(es_url)
    raise DataError(f"Unknown backend '{kind}': choose {' or '.join(BACKENDS)}.")


__all__ = [
    "BACKENDS",
    "Candidates",
    "IndexInfo",
    "IndexWriter",
    "OverlapBackend",
    "StoredDoc",
    "VectorHit",
    "get_backend",
]
