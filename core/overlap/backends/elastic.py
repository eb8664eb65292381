"""Elasticsearch backend, for training sets too large for one machine's disk or shared by a team.

Every LeakLens index is an ES index named ``leaklens-<name>`` with an explicit mapping: ``tokens`` holds
the document's word tokens joined by spaces under the whitespace analyzer, so ``match_phrase`` sees
exactly the tokens ``core.overlap.tokenize`` produces. Vectors: ES 8+ has ``dense_vector`` + ``knn``;
the 7.x OSS build has neither, so there vectors sit in a non-indexed object and are scored exactly with
``script_score`` over ``params._source``. Credentials come from the environment and are never shown.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np

from core.errors import BackendError, DataError
from core.overlap.backends.base import (
    Candidates,
    IndexInfo,
    IndexWriter,
    OverlapBackend,
    StoredDoc,
    VectorHit,
    check_index_name,
    check_index_type,
)
from core.overlap.sources import Document
from core.overlap.tokenize import joined, word_tokens

PREFIX = "leaklens-"
URL_ENV = "ES_URL"
USER_ENV = "ELASTIC_USER"
PASSWORD_ENV = "ELASTIC_PASSWORD"
API_KEY_ENV = "ELASTIC_API_KEY"
_SOURCE_FIELDS = ["doc_id", "dataset", "row", "turn", "text"]
_MSEARCH_BATCH = 200

# Exact cosine on ES 7 OSS: vectors are stored unit-length, so the dot product is the cosine; +1 keeps
# the score non-negative as script_score requires.
_COSINE_SCRIPT = (
    "def v = params._source.vector; double dot = 0.0; "
    "for (int i = 0; i < params.q.size(); ++i) { dot += params.q[i] * ((Number) v[i]).doubleValue(); } "
    "return dot + 1.0;"
)


def redact_url(url: str) -> str:
    """The URL without any user:password part, safe to show."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _client_module():
    import numpy

    # The 7.13 client (the newest one that talks to 7.x OSS servers) names np.float_, gone in NumPy 2.
    if "float_" not in numpy.__dict__:
        numpy.float_ = numpy.float64
    import elasticsearch
    import elasticsearch.helpers

    return elasticsearch


class ElasticsearchBackend(OverlapBackend):
    kind = "elasticsearch"

    def __init__(self, url: str | None = None, *, timeout: float = 60.0) -> None:
        url = (url or os.environ.get(URL_ENV) or "").strip()
        if not url:
            raise BackendError(f"No Elasticsearch URL: pass --es-url or set {URL_ENV}.")
        self.url = url
        self.shown_url = redact_url(url)
        es = _client_module()
        auth: dict[str, Any] = {}
        if os.environ.get(API_KEY_ENV):
            auth["api_key"] = os.environ[API_KEY_ENV]
        elif os.environ.get(PASSWORD_ENV):
            auth["http_auth"] = (os.environ.get(USER_ENV) or "elastic", os.environ[PASSWORD_ENV])
        self.client = es.Elasticsearch([url], timeout=timeout, **auth)
        self._errors = (es.TransportError, es.exceptions.ConnectionError)
        try:
            info = self.client.info()
        except es.exceptions.AuthenticationException as exc:
            raise BackendError(
                f"Elasticsearch at {self.shown_url} refused the credentials (check {USER_ENV}/{PASSWORD_ENV} "
                f"or {API_KEY_ENV})."
            ) from exc
        except self._errors as exc:
            raise BackendError(f"Elasticsearch is unreachable at {self.shown_url}: {_short(exc)}.") from exc
        self.version = str(info.get("version", {}).get("number", "0"))
        self.major = int(self.version.split(".")[0] or 0)
        # OpenSearch reports its own version numbers; it has no ES 8 knn, so use the exact path.
        self.has_knn = self.major >= 8 and info.get("version", {}).get("distribution") != "opensearch"

    # -- management -------------------------------------------------------------------------------------
    def _call(self, what: str, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except self._errors as exc:
            status = getattr(exc, "status_code", None)
            if status == 404:
                raise
            raise BackendError(f"Elasticsearch at {self.shown_url} failed to {what}: {_short(exc)}.") from exc

    def _exists(self, name: str) -> bool:
        return bool(self._call("check an index", self.client.indices.exists, index=PREFIX + name))

    def create(
        self,
        name: str,
        index_type: str,
        *,
        sources: list[dict[str, Any]],
        ngram_size: int,
        model: str | None = None,
        dims: int | None = None,
        overwrite: bool = False,
    ) -> IndexWriter:
        name = check_index_name(name)
        check_index_type(index_type)
        if self._exists(name):
            if not overwrite:
                raise DataError(f"An Elasticsearch index named '{name}' already exists; delete it first.")
            self.delete(name)
        if index_type == "vector" and not dims:
            raise DataError("A vector index needs the embedding dimension.")
        meta = {"leaklens": {"index_type": index_type, "model": model, "dims": dims, "sources": sources}}
        body = {
            "settings": {"number_of_shards": 1, "number_of_replicas": 0, "refresh_interval": "-1"},
            "mappings": {
                "dynamic": "strict",
                "_meta": meta,
                "_source": {"excludes": ["tokens"]},
                "properties": {
                    "doc_id": {"type": "long"},
                    "dataset": {"type": "keyword"},
                    "row": {"type": "long"},
                    "turn": {"type": "long"},
                    "text": {"type": "text", "index": False},
                    "tokens": {"type": "text", "analyzer": "whitespace", "norms": False},
                    "vector": (
                        self._vector_mapping(dims) if index_type == "vector" else {"type": "object", "enabled": False}
                    ),
                },
            },
        }
        self._call("create an index", self.client.indices.create, index=PREFIX + name, body=body)
        return _ElasticWriter(self, name, index_type)

    def _vector_mapping(self, dims: int | None) -> dict[str, Any]:
        if self.has_knn:  # ES 8+: approximate kNN over an HNSW graph
            return {"type": "dense_vector", "dims": dims, "index": True, "similarity": "cosine"}
        return {"type": "object", "enabled": False}  # ES 7 OSS: stored only, scored by script

    def list(self) -> list[IndexInfo]:
        try:
            mappings = self.client.indices.get_mapping(index=PREFIX + "*")
        except self._errors as exc:
            if getattr(exc, "status_code", None) == 404:
                return []
            raise BackendError(f"Elasticsearch at {self.shown_url} failed to list indexes: {_short(exc)}.") from exc
        names = sorted(k[len(PREFIX) :] for k, v in mappings.items() if "leaklens" in v["mappings"].get("_meta", {}))
        return [self.info(n) for n in names]

    def info(self, name: str) -> IndexInfo:
        name = check_index_name(name)
        if not self._exists(name):
            raise self.missing_index_error(name)
        index = PREFIX + name
        mapping = self._call("read a mapping", self.client.indices.get_mapping, index=index)[index]["mappings"]
        meta = mapping.get("_meta", {}).get("leaklens")
        if meta is None:
            raise DataError(f"Elasticsearch index {index} was not made by LeakLens.")
        stats = self._call("read index stats", self.client.indices.stats, index=index)["indices"][index]["primaries"]
        agg = self._call(
            "count documents",
            self.client.search,
            index=index,
            body={"size": 0, "aggs": {"d": {"terms": {"field": "dataset", "size": 10000}}}},
        )
        counts = {b["key"]: b["doc_count"] for b in agg["aggregations"]["d"]["buckets"]}
        order = [s["name"] for s in meta.get("sources", []) if s.get("name") in counts]
        datasets = {d: counts[d] for d in order + sorted(set(counts) - set(order))}
        return IndexInfo(
            name=name,
            backend=self.kind,
            index_type=meta["index_type"],
            n_docs=int(stats["docs"]["count"]),
            datasets=datasets,
            size_bytes=int(stats["store"]["size_in_bytes"]),
            ngram_size=None,
            model=meta.get("model"),
            sources=list(meta.get("sources") or []),
        )

    def delete(self, name: str) -> None:
        name = check_index_name(name)
        if not self._exists(name):
            raise self.missing_index_error(name)
        self._call("delete an index", self.client.indices.delete, index=PREFIX + name)

    # -- lookups ----------------------------------------------------------------------------------------
    def _msearch(self, index: str, bodies: list[dict[str, Any]]) -> list[tuple[list[dict[str, Any]], int]]:
        """Hits and total hit count per query body."""
        hits: list[tuple[list[dict[str, Any]], int]] = []
        for start in range(0, len(bodies), _MSEARCH_BATCH):
            lines: list[dict[str, Any]] = []
            for body in bodies[start : start + _MSEARCH_BATCH]:
                lines.extend(({"index": index}, body))
            result = self._call("search", self.client.msearch, body=lines)
            for response in result["responses"]:
                if "error" in response:
                    error = response["error"]
                    reason = error.get("reason", error) if isinstance(error, dict) else error
                    raise BackendError(f"Elasticsearch at {self.shown_url} rejected a query: {reason}.")
                total = response["hits"].get("total", 0)
                total = total.get("value", 0) if isinstance(total, dict) else int(total)
                hits.append((response["hits"]["hits"], total))
        return hits

    def _phrase_lookup(
        self, name: str, phrases_per_query: Sequence[Sequence[tuple[str, ...]]], datasets: Sequence[str], size: int
    ) -> Candidates:
        info = self.info(name)
        if info.index_type != "text":
            raise DataError(f"Index '{name}' is a {info.index_type} index; text search needs a text index.")
        wanted = list(datasets) or list(info.datasets)
        unique: dict[tuple[str, ...], int] = {}
        for phrases in phrases_per_query:
            for phrase in phrases:
                unique.setdefault(tuple(phrase), len(unique))
        phrases = list(unique)
        # One query per phrase over all datasets; where the cap cut the hits short, again per dataset,
        # so the cap applies per phrase and training set.
        first = self._msearch(PREFIX + name, [self._phrase_body(p, None, size) for p in phrases])
        docs: dict[int, StoredDoc] = {}
        per_phrase: list[set[int]] = []
        again: list[tuple[int, str]] = []
        for k, (hits, total) in enumerate(first):
            per_phrase.append(self._collect(hits, docs))
            if total > len(hits) and len(wanted) > 1:
                again.extend((k, d) for d in wanted)
        if again:
            second = self._msearch(PREFIX + name, [self._phrase_body(phrases[k], d, size) for k, d in again])
            for (k, _), (hits, _) in zip(again, second):
                per_phrase[k] |= self._collect(hits, docs)
        keep = set(wanted)
        docs = {i: d for i, d in docs.items() if d.dataset in keep}
        out = []
        for query in phrases_per_query:
            found: set[int] = set()
            for phrase in query:
                found |= per_phrase[unique[tuple(phrase)]]
            out.append(sorted(i for i in found if i in docs))
        return Candidates(out, docs)

    @staticmethod
    def _phrase_body(phrase: tuple[str, ...], dataset: str | None, size: int) -> dict[str, Any]:
        query: dict[str, Any] = {"match_phrase": {"tokens": {"query": joined(phrase)}}}
        if dataset is not None:
            query = {"bool": {"must": query, "filter": {"term": {"dataset": dataset}}}}
        return {"size": size, "_source": _SOURCE_FIELDS, "query": query, "track_total_hits": True}

    @staticmethod
    def _collect(hits: list[dict[str, Any]], docs: dict[int, StoredDoc]) -> set[int]:
        ids = set()
        for hit in hits:
            doc = _stored(hit["_source"])
            docs.setdefault(doc.doc_id, doc)
            ids.add(doc.doc_id)
        return ids

    def ngram_candidates(
        self, name: str, queries: Sequence[Sequence[tuple[str, ...]]], datasets: Sequence[str], search_size: int
    ) -> Candidates:
        return self._phrase_lookup(name, queries, datasets, search_size)

    def phrase_candidates(
        self, name: str, phrases: Sequence[tuple[str, ...]], datasets: Sequence[str], search_size: int
    ) -> Candidates:
        return self._phrase_lookup(name, [[p] for p in phrases], datasets, search_size)

    def vector_search(
        self, name: str, vectors: np.ndarray, dataset: str, k: int, min_similarity: float | None = None
    ) -> list[list[VectorHit]]:
        info = self.info(name)
        if info.index_type != "vector":
            raise DataError(f"Index '{name}' is a {info.index_type} index; vector search needs a vector index.")
        if self.has_knn:
            bodies = [self._knn_body(v, dataset, k) for v in vectors]
        else:
            bodies = [self._script_body(v, dataset, k, min_similarity) for v in vectors]
        out = []
        for hits, _ in self._msearch(PREFIX + name, bodies):
            row = [VectorHit(_stored(h["_source"]), self._similarity(h["_score"])) for h in hits]
            row.sort(key=lambda h: (-h.similarity, h.doc.doc_id))
            if min_similarity is not None:
                row = [h for h in row if h.similarity >= min_similarity]
            out.append(row)
        return out

    def _similarity(self, score: float) -> float:
        # knn cosine scores are (1 + cos) / 2; the script returns cos + 1.
        return 2.0 * score - 1.0 if self.has_knn else score - 1.0

    @staticmethod
    def _script_body(vector: np.ndarray, dataset: str, k: int, min_similarity: float | None) -> dict[str, Any]:
        body: dict[str, Any] = {
            "size": k,
            "_source": _SOURCE_FIELDS,
            "query": {
                "script_score": {
                    "query": {"bool": {"filter": {"term": {"dataset": dataset}}}},
                    "script": {"source": _COSINE_SCRIPT, "params": {"q": [float(x) for x in vector]}},
                }
            },
            "sort": [{"_score": "desc"}, {"doc_id": "asc"}],
            "track_scores": True,
        }
        if min_similarity is not None:
            body["min_score"] = min_similarity + 1.0
        return body

    @staticmethod
    def _knn_body(vector: np.ndarray, dataset: str, k: int) -> dict[str, Any]:
        return {
            "size": k,
            "_source": _SOURCE_FIELDS,
            "knn": {
                "field": "vector",
                "query_vector": [float(x) for x in vector],
                "k": k,
                "num_candidates": max(100, 10 * k),
                "filter": {"term": {"dataset": dataset}},
            },
        }


def _stored(source: dict[str, Any]) -> StoredDoc:
    return StoredDoc(int(source["doc_id"]), source["dataset"], int(source["row"]), source.get("turn"), source["text"])


def _short(exc: Exception) -> str:
    text = str(exc)
    return text if len(text) < 300 else text[:300] + "..."


class _ElasticWriter(IndexWriter):
    def __init__(self, backend: ElasticsearchBackend, name: str, index_type: str) -> None:
        self.backend = backend
        self.name = name
        self.index = PREFIX + name
        self.index_type = index_type
        self.n_docs = 0

    def _actions(self, docs: Sequence[Document], vectors: np.ndarray | None) -> Iterable[dict[str, Any]]:
        for i, doc in enumerate(docs):
            source: dict[str, Any] = {
                "doc_id": self.n_docs + i,
                "dataset": doc.dataset,
                "row": doc.row,
                "turn": doc.turn,
                "text": doc.text,
            }
            if self.index_type == "text":
                source["tokens"] = joined(word_tokens(doc.text))
            else:
                source["vector"] = [float(x) for x in vectors[i]]
            yield {"_index": self.index, "_id": str(self.n_docs + i), "_source": source}

    def add(self, docs: Sequence[Document], vectors: np.ndarray | None = None) -> None:
        if self.index_type == "vector" and (vectors is None or len(vectors) != len(docs)):
            raise ValueError("a vector index needs one vector per document")
        es = _client_module()
        try:
            ok, errors = es.helpers.bulk(
                self.backend.client, self._actions(docs, vectors), chunk_size=500, raise_on_error=False
            )
        except self.backend._errors as exc:
            raise BackendError(f"Elasticsearch at {self.backend.shown_url} failed to index: {_short(exc)}.") from exc
        if errors:
            raise BackendError(f"Elasticsearch rejected {len(errors)} documents, first: {str(errors[0])[:300]}.")
        self.n_docs += len(docs)

    def close(self) -> IndexInfo:
        client = self.backend.client
        self.backend._call(
            "finish the index", client.indices.put_settings, index=self.index, body={"refresh_interval": "1s"}
        )
        self.backend._call("refresh the index", client.indices.refresh, index=self.index)
        # Make sure every document is visible before reporting the index as ready.
        for _ in range(50):
            if client.count(index=self.index)["count"] >= self.n_docs:
                break
            time.sleep(0.1)
        return self.backend.info(self.name)

    def abort(self) -> None:
        try:
            self.backend.client.indices.delete(index=self.index, ignore=[404])
        except self.backend._errors:
            pass
