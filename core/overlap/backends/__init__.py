"""Overlap backends behind one interface: ``get_backend("embedded")`` (default) or ``"elasticsearch"``."""

from __future__ import annotations

from pathlib import Path

from core.errors import DataError
from core.overlap.backends.base import Candidates, IndexInfo, IndexWriter, OverlapBackend, StoredDoc, VectorHit

BACKENDS = ("embedded", "elasticsearch")


def get_backend(
    kind: str = "embedded",
    *,
    root: str | Path | None = None,
    es_url: str | None = None,
    es_ca_certs: str | None = None,
    es_verify_certs: bool = True,
) -> OverlapBackend:
    """``root``: directory of embedded indexes (default ``<cache>/indexes``); ``es_url``: else ``$ES_URL``;
    ``es_ca_certs``: the cluster's CA certificate, else ``$ELASTIC_CA_CERTS``; ``es_verify_certs=False`` turns
    TLS certificate checks off (with a warning)."""
    if kind == "embedded":
        from core.overlap.backends.embedded import EmbeddedBackend

        return EmbeddedBackend(root)
    if kind in ("elasticsearch", "es"):
        from core.overlap.backends.elastic import ElasticsearchBackend

        return ElasticsearchBackend(es_url, ca_certs=es_ca_certs, verify_certs=es_verify_certs)
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
