"""Scores of test instances against indexed training sets.

- **ngram** (size N on word tokens): a test token is covered by a training document when some N-gram of
  the test instance that spans the token occurs in the document. The best match is the document that
  covers the most test tokens (ties: lowest document id); the value is the covered fraction. Instances
  shorter than N tokens count as one gram: covered entirely or not at all.
- **exact**: 1 when the instance's whole token sequence occurs contiguously in a document, else 0.
- **vector**: cosine similarity of the most similar document.

Backends only propose candidates; the values are computed here, exactly, for every backend.
With a ``match_threshold`` the score is 1/0 (value >= threshold), otherwise the value itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import cast

from core.engine.progress import ProgressCallback
from core.errors import DataError
from core.overlap.backends.base import IndexInfo, OverlapBackend, StoredDoc
from core.overlap.embeddings import embed_texts
from core.overlap.sources import EvalInstance, EvalSet
from core.overlap.tokenize import ngrams, word_spans, word_tokens

MODES = ("ngram", "exact", "vector")
DEFAULT_SEARCH_SIZE = 100
REMOVAL_THRESHOLDS = {"ngram": 0.5, "exact": 1.0, "vector": 0.9}
"""Values at or above which a document counts as a match for decontamination when no threshold is set."""
_CHUNK = 200


@dataclass(frozen=True)
class SearchSettings:
    mode: str = "ngram"
    ngram_size: int = 8
    match_threshold: float | None = None
    """When set, scores become 1/0 (value >= threshold) and documents at or above it are removed."""
    search_size: int = DEFAULT_SEARCH_SIZE
    """Cap on candidates per query for backends that rank (Elasticsearch); the embedded index is exact."""

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise DataError(f"Mode must be one of {', '.join(MODES)}, not '{self.mode}'.")
        if self.ngram_size < 1:
            raise DataError("The n-gram size must be at least 1.")
        if self.search_size < 1:
            raise DataError("The search size must be at least 1.")
        if self.match_threshold is not None and not 0.0 <= self.match_threshold <= 1.0:
            raise DataError(f"The match threshold must lie in [0, 1], got {self.match_threshold}.")

    @property
    def removal_threshold(self) -> float:
        return self.match_threshold if self.match_threshold is not None else REMOVAL_THRESHOLDS[self.mode]

    def score(self, value: float) -> float:
        if self.match_threshold is None:
            return value
        return 1.0 if value >= self.match_threshold else 0.0


@dataclass(frozen=True)
class DocRef:
    doc_id: int
    row: int
    turn: int | None


@dataclass(frozen=True)
class Match:
    """One test instance against one training set."""

    eval_name: str
    test_id: str
    test_text: str
    index: str
    train_dataset: str
    value: float
    """Covered fraction (ngram), 0/1 (exact) or cosine similarity (vector) of the best document."""
    score: float
    best: StoredDoc | None
    test_spans: list[tuple[int, int]] = field(default_factory=list)
    """Character spans of the test text found in the best document."""
    train_spans: list[tuple[int, int]] = field(default_factory=list)
    """Character spans of the best document that match the test text."""
    matched_docs: list[DocRef] = field(default_factory=list)
    """Every document at or above the removal threshold (what decontamination drops)."""

    def to_json(self) -> dict:
        return {
            "eval_dataset": self.eval_name,
            "test_id": self.test_id,
            "score": self.score,
            "value": round(self.value, 6),
            "training_index": self.index,
            "training_dataset": self.train_dataset,
            "best_doc_id": self.best.doc_id if self.best else None,
            "best_doc_key": (f"{self.best.row}" if self.best.turn is None else f"{self.best.row}:{self.best.turn}")
            if self.best
            else None,
            "best_doc_text": self.best.text if self.best else None,
            "test_text": self.test_text,
            "test_spans": [list(s) for s in self.test_spans],
            "train_spans": [list(s) for s in self.train_spans],
            "n_matched_docs": len(self.matched_docs),
        }


@dataclass(frozen=True)
class Coverage:
    value: float
    test_tokens: list[int]
    """Indices of covered test tokens."""
    doc_tokens: list[int]
    """Indices of the document tokens that take part in a shared gram."""


def ngram_coverage(test: Sequence[str], doc: Sequence[str], n: int) -> Coverage:
    """Exact coverage of the test tokens by one document's n-grams."""
    if not test:
        return Coverage(0.0, [], [])
    if len(test) < n:
        start = _find(doc, test)
        if start < 0:
            return Coverage(0.0, [], [])
        return Coverage(1.0, list(range(len(test))), list(range(start, start + len(test))))
    doc_grams: dict[tuple[str, ...], list[int]] = {}
    for i, gram in enumerate(ngrams(doc, n) if len(doc) >= n else []):
        doc_grams.setdefault(gram, []).append(i)
    covered_test: set[int] = set()
    covered_doc: set[int] = set()
    for i, gram in enumerate(ngrams(test, n)):
        positions = doc_grams.get(gram)
        if positions:
            covered_test.update(range(i, i + n))
            for p in positions:
                covered_doc.update(range(p, p + n))
    return Coverage(len(covered_test) / len(test), sorted(covered_test), sorted(covered_doc))


def _find(haystack: Sequence[str], needle: Sequence[str]) -> int:
    """First token position of ``needle`` in ``haystack``, -1 when absent."""
    m = len(needle)
    first = needle[0]
    for i in range(len(haystack) - m + 1):
        if haystack[i] == first and list(haystack[i : i + m]) == list(needle):
            return i
    return -1


def token_char_spans(text: str, token_indices: Sequence[int]) -> list[tuple[int, int]]:
    """Character spans of the given token indices; runs of adjacent tokens join into one span."""
    spans = word_spans(text)
    out: list[tuple[int, int]] = []
    previous = -2
    for i in sorted(token_indices):
        start, end = spans[i]
        if out and i == previous + 1:
            out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
        previous = i
    return out


def search(
    backend: OverlapBackend,
    index_names: Sequence[str],
    test_sets: Sequence[EvalSet],
    settings: SearchSettings = SearchSettings(),
    *,
    collect_removals: bool = True,
    progress: ProgressCallback | None = None,
) -> list[Match]:
    """Best match of every test instance in every training set of every index."""
    if not index_names:
        raise DataError("Choose at least one index to search.")
    infos = [backend.searchable_info(name) for name in index_names]
    for info in infos:
        wanted = "vector" if settings.mode == "vector" else "text"
        if info.index_type != wanted:
            raise DataError(
                f"Index '{info.name}' is a {info.index_type} index; {settings.mode} search needs a {wanted} index."
            )
    total = sum(len(t) for t in test_sets) * len(infos)
    step = _CHUNK if settings.mode == "vector" else backend.search_batch
    jobs = [
        (info, test_set.name, test_set.instances[start : start + step])
        for info in infos
        for test_set in test_sets
        for start in range(0, len(test_set.instances), step)
    ]
    done = 0
    matches: list[Match] = []
    if settings.mode == "vector":
        for info, eval_name, chunk in jobs:
            matches.extend(_vector_chunk(backend, info, eval_name, chunk, settings, collect_removals))
            done += len(chunk)
            if progress:
                progress(done, total)
        return matches
    # The next chunk's candidates are fetched while this one is scored: a server (Elasticsearch) answers
    # while Python scores, and SQLite releases the interpreter lock while it reads.
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(_text_candidates, backend, jobs[0][0], jobs[0][2], settings) if jobs else None
        for k, (info, eval_name, chunk) in enumerate(jobs):
            fetched = cast(Future[_TextCandidates], pending).result()  # set whenever there is a job
            if k + 1 < len(jobs):
                pending = pool.submit(_text_candidates, backend, jobs[k + 1][0], jobs[k + 1][2], settings)
            matches.extend(_score_chunk(info, eval_name, chunk, settings, *fetched))
            done += len(chunk)
            if progress:
                progress(done, total)
    return matches


_TextCandidates = tuple[list[list[str]], dict[int, list[int]], dict[int, StoredDoc]]
"""Per instance of a chunk its tokens; per instance position its candidate documents; those documents."""


def _text_candidates(
    backend: OverlapBackend, info: IndexInfo, chunk: Sequence[EvalInstance], settings: SearchSettings
) -> _TextCandidates:
    """Each instance's tokens and candidate documents (by position in ``chunk``), and those documents."""
    n = settings.ngram_size
    datasets = list(info.datasets)
    tokens = [word_tokens(inst.text) for inst in chunk]
    if settings.mode == "exact":
        short = list(range(len(chunk)))
        long: list[int] = []
    else:
        short = [i for i, t in enumerate(tokens) if 0 < len(t) < n]
        long = [i for i, t in enumerate(tokens) if len(t) >= n]
    candidates: dict[int, list[int]] = {}
    docs: dict[int, StoredDoc] = {}
    if long:
        found = backend.ngram_candidates(
            info.name, [ngrams(tokens[i], n) for i in long], datasets, settings.search_size
        )
        candidates.update(zip(long, found.ids))
        docs.update(found.docs)
    short = [i for i in short if tokens[i]]
    if short:
        found = backend.phrase_candidates(info.name, [tuple(tokens[i]) for i in short], datasets, settings.search_size)
        candidates.update(zip(short, found.ids))
        docs.update(found.docs)
    return tokens, candidates, docs


def _score_chunk(
    info: IndexInfo,
    eval_name: str,
    chunk: Sequence[EvalInstance],
    settings: SearchSettings,
    tokens: list[list[str]],
    candidates: dict[int, list[int]],
    docs: dict[int, StoredDoc],
) -> list[Match]:
    """Exact scores of each instance against its candidates: the best document per training set."""
    n = settings.ngram_size
    datasets = list(info.datasets)
    doc_tokens: dict[int, list[str]] = {}
    out: list[Match] = []
    for i, inst in enumerate(chunk):
        per_dataset: dict[str, list[tuple[StoredDoc, Coverage]]] = {d: [] for d in datasets}
        for doc_id in candidates.get(i, []):
            doc = docs[doc_id]
            if doc_id not in doc_tokens:
                doc_tokens[doc_id] = word_tokens(doc.text)
            if settings.mode == "exact":
                cov = ngram_coverage(tokens[i], doc_tokens[doc_id], len(tokens[i]) + 1)
            else:
                cov = ngram_coverage(tokens[i], doc_tokens[doc_id], n)
            if cov.value > 0 and doc.dataset in per_dataset:
                per_dataset[doc.dataset].append((doc, cov))
        for dataset in datasets:
            scored = per_dataset[dataset]
            out.append(_best_match(eval_name, inst, info.name, dataset, scored, settings))
    return out


def _best_match(
    eval_name: str,
    inst: EvalInstance,
    index: str,
    dataset: str,
    scored: list[tuple[StoredDoc, Coverage]],
    settings: SearchSettings,
) -> Match:
    if not scored:
        return Match(eval_name, inst.id, inst.text, index, dataset, 0.0, settings.score(0.0), None)
    best_doc, best_cov = min(scored, key=lambda pair: (-pair[1].value, pair[0].doc_id))
    threshold = settings.removal_threshold
    removed = sorted(
        (DocRef(d.doc_id, d.row, d.turn) for d, c in scored if c.value >= threshold), key=lambda r: r.doc_id
    )
    return Match(
        eval_name,
        inst.id,
        inst.text,
        index,
        dataset,
        best_cov.value,
        settings.score(best_cov.value),
        best_doc,
        token_char_spans(inst.text, best_cov.test_tokens),
        token_char_spans(best_doc.text, best_cov.doc_tokens),
        removed,
    )


def _vector_chunk(
    backend: OverlapBackend,
    info: IndexInfo,
    eval_name: str,
    chunk: Sequence[EvalInstance],
    settings: SearchSettings,
    collect_removals: bool,
) -> list[Match]:
    vectors = embed_texts([inst.text for inst in chunk], info.model or "all-MiniLM-L6-v2")
    out: list[Match] = []
    threshold = settings.removal_threshold
    for dataset in info.datasets:
        best = backend.vector_search(info.name, vectors, dataset, 1)
        if collect_removals:
            cap = info.datasets[dataset] if backend.kind == "embedded" else settings.search_size
            above = backend.vector_search(info.name, vectors, dataset, max(1, cap), min_similarity=threshold)
        else:
            above = [[] for _ in chunk]
        for inst, hits, removal in zip(chunk, best, above):
            if not hits:
                out.append(Match(eval_name, inst.id, inst.text, info.name, dataset, 0.0, settings.score(0.0), None))
                continue
            hit = hits[0]
            out.append(
                Match(
                    eval_name,
                    inst.id,
                    inst.text,
                    info.name,
                    dataset,
                    hit.similarity,
                    settings.score(hit.similarity),
                    hit.doc,
                    [(0, len(inst.text))] if hit.similarity >= threshold else [],
                    [(0, len(hit.doc.text))] if hit.similarity >= threshold else [],
                    sorted((DocRef(h.doc.doc_id, h.doc.row, h.doc.turn) for h in removal), key=lambda r: r.doc_id),
                )
            )
    return out
