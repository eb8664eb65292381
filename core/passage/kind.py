"""Which freshly written passages are nearest to a passage in kind, and how predictable that kind is.

Text can be predictable because of its kind (a recipe, a changelog, a contract clause follows a formula) as much as
because a model has read it. A passage is therefore read against the fresh passages of similar length that are
nearest to it in kind, found by sentence embeddings (all-MiniLM-L6-v2, bundled): the ``KIND_NEIGHBOURS`` most
similar ones. Their median score is what text of its kind scores; the passage's *kind-adjusted* score is its own
score minus that median. Every fresh passage of similar length gets the same adjustment against its own nearest
fresh passages (itself left out), so the passage's adjusted score can be placed among hundreds of adjusted fresh
scores: a recipe is then compared with recipes, and a famous text still stands out from everything.

The fresh set's embeddings ship with LeakLens (``assets/calibration/fresh_embeddings.npy``, made by
``python -m bench.calibration``); a set of one's own is embedded once and kept in the LeakLens cache.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.config import ASSETS_DIR, cache_subdir
from core.engine.progress import ProgressCallback
from core.errors import DataError

KIND_NEIGHBOURS = 40
"""Fresh passages nearest in kind that set what a passage's kind scores (the median of their scores). 40 is about
one kind of the shipped set (each formulaic kind has at least 40 passages), so a recipe's neighbours are mostly
recipes and instructions; measured on held-out formulaic text, fewer made the median noisy and more mixed kinds."""
EMBEDDINGS_PATH = ASSETS_DIR / "calibration" / "fresh_embeddings.npy"
EMBEDDINGS_META_PATH = ASSETS_DIR / "calibration" / "fresh_embeddings.json"
"""Which set (fingerprint) and embedding model the shipped vectors belong to."""
KIND_WORDS = {
    "narrative": "stories and accounts",
    "technical": "technical texts",
    "news": "news reports",
    "instructions": "instructions",
    "dialogue": "dialogues",
    "code": "code",
    "non-english": "non-English texts",
    "recipe": "recipes",
    "weather": "weather reports",
    "sports": "sports reports",
    "contract": "contract clauses",
    "licence": "licences",
    "policy": "policies",
    "changelog": "changelogs",
    "api-reference": "API references",
    "code-comment": "code comments",
    "form": "forms",
    "list": "lists",
    "faq": "FAQ answers",
    "email": "form emails",
    "listing": "listings and adverts",
    "job-posting": "job adverts",
    "minutes": "meeting minutes",
    "notice": "public notices",
}
"""How the comparison names the fresh passages nearest in kind, by their form (``assets/calibration/README.md``)."""


def kind_words(forms: Sequence[str]) -> str:
    """The kinds that make up most of the nearest fresh passages, in plain words: "recipes and instructions"
    (the commonest form, and the second when it is at least a quarter of them); "passages" without forms."""
    counted = Counter(f for f in forms if f)
    if not counted:
        return "passages"
    (first, _), *rest = counted.most_common(2)
    names = [KIND_WORDS.get(first, first)]
    if rest and rest[0][1] * 4 >= len(forms):
        names.append(KIND_WORDS.get(rest[0][0], rest[0][0]))
    return " and ".join(names)


@dataclass(frozen=True)
class KindNeighbours:
    """A passage's nearest fresh passages in kind, as positions into the compared (similar-length) set."""

    positions: tuple[int, ...]
    """Into the compared set, nearest first."""
    words: str
    """What they are, in plain words ("recipes and instructions")."""


def nearest(vector: np.ndarray, compared: np.ndarray, k: int = KIND_NEIGHBOURS) -> np.ndarray:
    """Positions (into ``compared``) of the ``k`` rows most similar to ``vector`` (unit vectors), nearest first;
    ties by position, so the choice is the same on every machine."""
    similarity = compared @ vector
    order = np.lexsort((np.arange(len(similarity)), -np.round(similarity, 6)))
    return order[: min(k, len(order))]


def fresh_neighbours(vectors: np.ndarray, k: int = KIND_NEIGHBOURS) -> np.ndarray:
    """Per compared fresh passage, the positions of its ``k`` nearest others in kind (itself left out), rows of
    one array: the same for every method placed, so found once per placement."""
    similarity = vectors @ vectors.T
    np.fill_diagonal(similarity, -np.inf)
    k = min(k, len(vectors) - 1)
    if k < 1:
        return np.zeros((len(vectors), 0), dtype=np.int64)
    rounded = np.round(similarity, 6)
    index = np.arange(len(vectors))
    return np.stack([np.lexsort((index, -rounded[i]))[:k] for i in range(len(vectors))])


def adjusted_fresh(
    scores: np.ndarray, vectors: np.ndarray, k: int = KIND_NEIGHBOURS, *, neighbours: np.ndarray | None = None
) -> np.ndarray:
    """Each compared fresh passage's score minus the median score of its ``k`` nearest others in kind (itself
    left out): the reference a passage's own kind-adjusted score is placed among. ``neighbours``: the
    ``fresh_neighbours`` of ``vectors``, when already found for another method."""
    rows = fresh_neighbours(vectors, k) if neighbours is None else neighbours
    if rows.shape[1] == 0:
        return np.zeros_like(scores)
    return scores - np.median(scores[rows], axis=1)


# ------------------------------------------------------------------ embeddings of the fresh set and of a passage


def embed(texts: Sequence[str], progress: ProgressCallback | None = None) -> np.ndarray:
    """Unit vectors of ``texts`` under the bundled sentence-embedding model."""
    from core.overlap.embeddings import embed_texts

    return embed_texts(list(texts), progress=progress)


def fresh_embeddings(fingerprint: str, texts: Sequence[str], progress: ProgressCallback | None = None) -> np.ndarray:
    """The fresh set's vectors, in file order: the shipped ones for the shipped set, else embedded once (about 40 s
    for a thousand passages on two CPU cores) and kept in the cache by the set's fingerprint."""
    shipped = _read_vectors(EMBEDDINGS_PATH, EMBEDDINGS_META_PATH, fingerprint, len(texts))
    if shipped is not None:
        return shipped
    folder = cache_subdir("fresh-embeddings")
    path, meta = folder / f"{fingerprint[:32]}.npy", folder / f"{fingerprint[:32]}.json"
    cached = _read_vectors(path, meta, fingerprint, len(texts))
    if cached is not None:
        return cached
    vectors = embed(texts, progress)
    write_vectors(path, meta, vectors, fingerprint)
    return vectors


def embeddings_meta(fingerprint: str, n: int) -> dict[str, object]:
    from core.overlap.embeddings import DEFAULT_EMBEDDING_MODEL

    return {"passages": fingerprint, "n": n, "model": DEFAULT_EMBEDDING_MODEL, "dtype": "float16"}


def write_vectors(path: Path, meta_path: Path, vectors: np.ndarray, fingerprint: str) -> None:
    """Vectors as float16 (half the size, similarities equal to 1e-3) with the set they belong to beside them."""
    from core.files.outputs import atomic_output, write_atomic

    with atomic_output(path, binary=True) as handle:
        np.save(handle, vectors.astype(np.float16), allow_pickle=False)
    write_atomic(meta_path, json.dumps(embeddings_meta(fingerprint, len(vectors)), sort_keys=True) + "\n")


def _read_vectors(path: Path, meta_path: Path, fingerprint: str, n: int) -> np.ndarray | None:
    """The vectors at ``path`` when they belong to this set (fingerprint and count), else None."""
    if not path.is_file() or not meta_path.is_file():
        return None
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if meta.get("passages") != fingerprint or meta.get("n") != n:
            return None
        vectors = np.load(path, allow_pickle=False).astype(np.float32)
    except (OSError, ValueError) as exc:
        raise DataError(
            f"{path} is damaged ({exc}); delete it, or rebuild the shipped one with `make calibration`."
        ) from exc
    if vectors.shape[0] != n:
        return None
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)
