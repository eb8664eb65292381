"""Elasticsearch backend, for training sets too large for one machine's disk or shared by a team.

Every LeakLens index is an alias ``leaklens-<name>`` over one physical index ``leaklens-<name>.<build id>``
(indexes built before aliases are a physical index ``leaklens-<name>``; both are read). A build fills a new
physical index, marks it ``complete`` in its ``_meta`` and only then moves the alias and deletes what it
replaces, so a failed ``--overwrite`` keeps the old index and a build cut off by a stopped server is listed as
incomplete rather than searched. The mapping is explicit: ``grams`` holds the 64-bit hash of each distinct
word n-gram of the index's n-gram size (``gram_hash``, the embedded index's key), so one ``terms`` query per
test instance finds every document sharing one of its n-grams. It is a ``long`` field: Lucene looks a set of
numbers up in one pass over its point tree, where keyword terms would cost one term-dictionary seek each (the
difference is measured in docs/benchmarks.md, Overlap search). ``tokens`` holds the document's word tokens
joined by spaces under the whitespace analyzer, so ``match_phrase`` sees exactly the tokens
``core.overlap.tokenize`` produces: it serves other n-gram sizes, instances shorter than the n-gram size, and
indexes built before ``grams`` existed. Vectors: ES 8.4+ has ``dense_vector`` + ``knn``; older servers (the
7.x OSS build, 8.0-8.3) store vectors in a non-indexed object scored exactly with ``script_score`` over
``params._source``. Credentials come from the environment and are never shown.
"""

from __future__ import annotations

import builtins
import json
import logging
import os
import re
import time
import uuid
from collections.abc import Callable, Hashable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, cast
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
from core.overlap.tokenize import gram_hash, joined, ngrams, word_tokens

PREFIX = "leaklens-"
_BUILD_SEP = "."
"""Separates a name from its build id in a physical index name; index names never contain it."""
URL_ENV = "ES_URL"
USER_ENV = "ELASTIC_USER"
PASSWORD_ENV = "ELASTIC_PASSWORD"
API_KEY_ENV = "ELASTIC_API_KEY"
CA_CERTS_ENV = "ELASTIC_CA_CERTS"
KNN_SINCE = (8, 4)
"""The ``knn`` option of ``_search`` appeared in Elasticsearch 8.4; 8.0-8.3 had only the ``_knn_search`` API."""
_SOURCE_FIELDS = ["doc_id", "dataset", "row", "turn", "text"]
_GRAMS = "grams"
"""Field of a text index: the ``gram_hash`` of each distinct word n-gram of the index's n-gram size."""
_MSEARCH_QUERIES = 100
_MSEARCH_IN_FLIGHT = 2
_MSEARCH_BYTES = 1 << 20
"""Bounds of one ``msearch`` request: it stays small next to ``http.max_content_length`` (100 MB) and
the server's memory, whatever the test instances' lengths."""
_BATCH_TERMS = 30_000
"""n-gram hashes in one batched ``terms`` query: under ``index.max_terms_count`` (65,536), about 600 kB."""
_BATCH_HITS = 2000
"""Documents one batched query may return; a batch with more is looked up one instance at a time."""
_TERMS_PER_QUERY = 1000
"""n-gram hashes per query: a ranked query has one clause each, under the boolean clause limit (1024 on ES 7)."""
_MERGE_WAIT_S = 1800
"""How long a build waits for the final merge of its index before publishing it anyway."""
_BULK_DOCS = 5000
_BULK_BYTES = 8 << 20
"""Bulk requests of a few MB: large enough that per-request overhead vanishes, small enough for any node."""

# Exact cosine on ES 7 OSS: vectors are stored unit-length, so the dot product is the cosine; +1 keeps
# the score non-negative as script_score requires.
_COSINE_SCRIPT = (
    "def v = params._source.vector; double dot = 0.0; "
    "for (int i = 0; i < params.q.size(); ++i) { dot += params.q[i] * ((Number) v[i]).doubleValue(); } "
    "return dot + 1.0;"
)


def redact_url(url: str) -> str:
    """The URL without any user:password part, safe to show, whatever else is wrong with it."""
    try:
        parts = urlsplit(url)
    except ValueError:  # e.g. an unclosed IPv6 bracket: show nothing of it rather than the credentials
        return "(an unparseable URL)"
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))


def check_url(url: str) -> None:
    """Refuse a URL the client would misread (it turns ``ftp://`` into ``http://...:9200``) or crash on."""
    shown = redact_url(url)
    example = "use e.g. http://localhost:9200"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError when the port is not a number
    except ValueError:
        port = shown.partition("://")[2].partition("/")[0].rpartition(":")[2]
        what = f"has an invalid port '{port}'" if port else "cannot be read"
        raise BackendError(f"Elasticsearch URL {shown} {what}: {example}.") from None
    if parts.scheme not in ("http", "https"):
        raise BackendError(f"Elasticsearch URL {shown} must start with http:// or https://.")
    if not parts.hostname:
        raise BackendError(f"Elasticsearch URL {shown} names no host: {example}.")


def _quiet_client_logs() -> None:
    """The client logs every failed request with a traceback (one per retry); the one error LeakLens raises
    says what matters, so those logs show only when the user asked for detail (``-v`` logs at INFO)."""
    if not logging.getLogger().isEnabledFor(logging.INFO):
        for name in ("elasticsearch", "urllib3"):
            logging.getLogger(name).setLevel(logging.ERROR)


def _client_module():
    import numpy

    # The 7.13 client (the newest one that talks to 7.x OSS servers) names np.float_, gone in NumPy 2.
    if "float_" not in numpy.__dict__:
        numpy.float_ = numpy.float64
    import elasticsearch
    import elasticsearch.helpers

    return elasticsearch


def supports_knn(version: str, distribution: str | None = None) -> bool:
    """Whether a server of this version answers ``knn`` in ``_search`` (Elasticsearch 8.4 and later).

    OpenSearch reports its own version numbers and has no such option; servers without it get the exact
    ``script_score`` path."""
    if distribution == "opensearch":
        return False
    numbers = [int(n) for n in re.findall(r"\d+", version)[:2]]
    return tuple(numbers + [0] * (2 - len(numbers))) >= KNN_SINCE


def tls_options(url: str, ca_certs: str | None, verify_certs: bool) -> tuple[dict[str, Any], str | None]:
    """The client's TLS arguments, and the warning to show when verification is off.

    ES 8/9 clusters serve HTTPS with a certificate signed by their own CA: ``ca_certs`` (else
    ``$ELASTIC_CA_CERTS``) names that CA's PEM file. Verification stays on unless turned off explicitly."""
    ca_certs = (ca_certs or os.environ.get(CA_CERTS_ENV) or "").strip() or None
    if ca_certs is not None and not os.path.isfile(ca_certs):
        raise BackendError(
            f"CA certificate file '{ca_certs}' (from --es-ca-certs or {CA_CERTS_ENV}) does not exist: give the "
            "PEM file of the CA that signed the cluster's certificate (ES 8+ writes it to config/certs/http_ca.crt)."
        )
    if urlsplit(url).scheme != "https":
        return {}, None
    if not verify_certs:
        warning = (
            f"TLS certificate verification is off for {redact_url(url)}: anyone on the network path can read and "
            f"change the traffic, credentials included. Prefer --es-ca-certs or {CA_CERTS_ENV}."
        )
        return {"verify_certs": False, "ssl_show_warn": False}, warning
    return ({"ca_certs": ca_certs} if ca_certs else {}), None


class ElasticsearchBackend(OverlapBackend):
    kind = "elasticsearch"
    search_batch = 1000

    def __init__(
        self,
        url: str | None = None,
        *,
        timeout: float = 60.0,
        ca_certs: str | None = None,
        verify_certs: bool = True,
    ) -> None:
        """``ca_certs``: PEM file of the cluster's CA (default ``$ELASTIC_CA_CERTS``); ``verify_certs=False``
        skips certificate checks, with a warning (kept in ``tls_warning`` for pages to show)."""
        url = (url or os.environ.get(URL_ENV) or "").strip()
        if not url:
            raise BackendError(f"No Elasticsearch URL: pass --es-url or set {URL_ENV}.")
        check_url(url)
        self.url = url
        self.shown_url = redact_url(url)
        _quiet_client_logs()
        es = _client_module()
        tls, self.tls_warning = tls_options(url, ca_certs, verify_certs)
        if self.tls_warning:
            logging.getLogger(__name__).warning("warning: %s", self.tls_warning)
        auth: dict[str, Any] = {}
        if os.environ.get(API_KEY_ENV):
            auth["api_key"] = os.environ[API_KEY_ENV]
        elif os.environ.get(PASSWORD_ENV):
            auth["http_auth"] = (os.environ.get(USER_ENV) or "elastic", os.environ[PASSWORD_ENV])
        try:
            self.client = es.Elasticsearch([url], timeout=timeout, **tls, **auth)
        except es.exceptions.ImproperlyConfigured as exc:
            raise BackendError(f"Cannot connect to {self.shown_url} over TLS: {exc} (or pass --es-ca-certs).") from exc
        self._errors = (es.TransportError, es.exceptions.ConnectionError)
        try:
            info = self.client.info()
        except es.exceptions.AuthenticationException as exc:
            raise BackendError(
                f"Elasticsearch at {self.shown_url} refused the credentials (check {USER_ENV}/{PASSWORD_ENV} "
                f"or {API_KEY_ENV})."
            ) from exc
        except es.exceptions.SSLError as exc:
            raise BackendError(
                f"The TLS certificate of {self.shown_url} could not be verified ({_short(exc)}). Pass the cluster's "
                f"CA certificate with --es-ca-certs or {CA_CERTS_ENV} (ES 8+ writes it to config/certs/http_ca.crt); "
                "only on a network you trust, --es-no-verify-certs turns the check off."
            ) from exc
        except self._errors as exc:
            raise BackendError(f"Elasticsearch is unreachable at {self.shown_url}: {_short(exc)}.") from exc
        version = info.get("version", {})
        self.version = str(version.get("number", "0"))
        self.major = int(cast(re.Match[str], re.match(r"\d*", self.version)).group() or 0)  # \d* always matches
        self.has_knn = supports_knn(self.version, version.get("distribution"))

    # -- management -------------------------------------------------------------------------------------
    def _call(self, what: str, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except self._errors as exc:
            status = getattr(exc, "status_code", None)
            if status == 404:
                raise
            raise BackendError(f"Elasticsearch at {self.shown_url} failed to {what}: {_short(exc)}.") from exc

    def _located(self) -> dict[str, _Located]:
        """Every LeakLens index by name: the concrete ES index it is read from, and its unfinished builds.

        A name is an alias over one physical index ``leaklens-<name>.<build id>``; an index built before
        aliases is a physical index named ``leaklens-<name>``. A physical index without the alias is a build
        that has not finished (or never will): it stands for the name only while nothing else does.
        """
        try:
            mappings = self.client.indices.get_mapping(index=PREFIX + "*")
            aliases = self.client.indices.get_alias(index=PREFIX + "*")
        except self._errors as exc:
            if getattr(exc, "status_code", None) == 404:
                return {}
            raise BackendError(f"Elasticsearch at {self.shown_url} failed to list indexes: {_short(exc)}.") from exc
        found: dict[str, _Located] = {}
        for index, body in mappings.items():
            meta = body["mappings"].get("_meta", {}).get("leaklens")
            if meta is None:
                continue
            # The fields the index really has: indexes built by older versions lack some (e.g. ``grams``).
            fields = {k: v.get("type", "object") for k, v in body["mappings"].get("properties", {}).items()}
            meta = {**meta, _FIELDS: fields}
            named = [a[len(PREFIX) :] for a in aliases.get(index, {}).get("aliases", {}) if a.startswith(PREFIX)]
            if named:
                for name in named:
                    found.setdefault(name, _Located()).live = (index, meta)
            elif _BUILD_SEP in index:
                found.setdefault(index[len(PREFIX) :].split(_BUILD_SEP)[0], _Located()).builds.append((index, meta))
            else:
                found.setdefault(index[len(PREFIX) :], _Located()).live = (index, meta)
        return {name: loc for name, loc in found.items() if _valid_name(name)}

    def _locate(self, name: str) -> _Located:
        located = self._located().get(check_index_name(name))
        if located is None:
            raise self.missing_index_error(name)
        return located

    def _complete(self, index: str, meta: dict[str, Any]) -> bool:
        """The marker set when a build finished; an index built before the marker existed counts as
        finished unless it still has the build's ``refresh_interval: -1``."""
        if "complete" in meta:
            return bool(meta["complete"])
        settings = self._call("read index settings", self.client.indices.get_settings, index=index)
        return str(settings[index]["settings"]["index"].get("refresh_interval", "1s")) != "-1"

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
        """Builds into a new physical index; the name moves to it only when the build has finished, so a
        failed ``overwrite`` leaves the old index whole and searchable."""
        name = check_index_name(name)
        check_index_type(index_type)
        located = self._located().get(name)
        if located is not None and located.live and not overwrite and self._complete(*located.live):
            raise DataError(
                f"An Elasticsearch index named '{name}' already exists; delete it first or pass --overwrite."
            )
        if index_type == "vector" and not dims:
            raise DataError("A vector index needs the embedding dimension.")
        if ngram_size < 1:
            raise DataError("The n-gram size must be at least 1.")
        meta = {
            "leaklens": {
                "index_type": index_type,
                "model": model,
                "dims": dims,
                "sources": sources,
                "ngram_size": ngram_size if index_type == "text" else None,
                "complete": False,
            }
        }
        body = {
            "settings": {"number_of_shards": 1, "number_of_replicas": 0, "refresh_interval": "-1"},
            "mappings": {
                "dynamic": "strict",
                "_meta": meta,
                "_source": {"excludes": ["tokens", _GRAMS]},
                "properties": {
                    "doc_id": {"type": "long"},
                    "dataset": {"type": "keyword"},
                    "row": {"type": "long"},
                    "turn": {"type": "long"},
                    "text": {"type": "text", "index": False},
                    "tokens": {"type": "text", "analyzer": "whitespace", "norms": False},
                    _GRAMS: {"type": "long", "doc_values": False},
                    "vector": (
                        self._vector_mapping(dims) if index_type == "vector" else {"type": "object", "enabled": False}
                    ),
                },
            },
        }
        # Build ids sort by start time, so the newest unfinished build is the one a listing shows.
        physical = f"{PREFIX}{name}{_BUILD_SEP}{time.time_ns():x}{uuid.uuid4().hex[:4]}"
        self._call("create an index", self.client.indices.create, index=physical, body=body)
        return _ElasticWriter(self, name, index_type, physical, meta)

    def _publish(self, name: str, physical: str, meta: dict[str, Any]) -> None:
        """Mark ``physical`` complete, then point the name at it and drop what it replaces in one atomic
        alias update: searches see the old index or the new one, never neither or both."""
        meta = {"leaklens": {**meta["leaklens"], "complete": True}}
        self._call("mark the index complete", self.client.indices.put_mapping, index=physical, body={"_meta": meta})
        located = self._located().get(name, _Located())
        replaced = [i for i, _ in ([located.live] if located.live else []) + located.builds if i != physical]
        actions: list[dict[str, Any]] = [{"remove_index": {"index": i}} for i in replaced]
        actions.append({"add": {"index": physical, "alias": PREFIX + name}})
        self._call("switch the index alias", self.client.indices.update_aliases, body={"actions": actions})

    def _vector_mapping(self, dims: int | None) -> dict[str, Any]:
        if self.has_knn:  # ES 8+: approximate kNN over an HNSW graph
            return {"type": "dense_vector", "dims": dims, "index": True, "similarity": "cosine"}
        return {"type": "object", "enabled": False}  # ES 7 OSS: stored only, scored by script

    def list(self) -> list[IndexInfo]:
        return [self._info(name, located) for name, located in sorted(self._located().items())]

    def info(self, name: str) -> IndexInfo:
        return self._info(check_index_name(name), self._locate(name))

    def _info(self, name: str, located: _Located) -> IndexInfo:
        index, meta = located.current
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
            ngram_size=_gram_size(meta),
            model=meta.get("model"),
            sources=list(meta.get("sources") or []),
            complete=located.live is not None and self._complete(index, meta),
        )

    def delete(self, name: str) -> None:
        """Removes the index and any unfinished builds of that name."""
        located = self._locate(name)
        for index, _ in ([located.live] if located.live else []) + located.builds:
            self._call("delete an index", self.client.indices.delete, index=index, ignore=[404])

    # -- lookups ----------------------------------------------------------------------------------------
    def _msearch(
        self, index: str, bodies: builtins.list[dict[str, Any]]
    ) -> builtins.list[tuple[builtins.list[dict[str, Any]], int]]:
        """Hits and total hit count per query body, sent in requests bounded in queries and bytes, two at a
        time: the server runs the next request's queries while the client reads the last one's answer."""
        hits: list[tuple[list[dict[str, Any]], int]] = []
        payloads = _ndjson_batches(bodies, _MSEARCH_QUERIES, _MSEARCH_BYTES)
        with ThreadPoolExecutor(max_workers=_MSEARCH_IN_FLIGHT) as pool:
            results = pool.map(lambda p: self._call("search", self.client.msearch, body=p, index=index), payloads)
        for result in results:
            for response in result["responses"]:
                if "error" in response:
                    error = response["error"]
                    reason = error.get("reason", error) if isinstance(error, dict) else error
                    raise BackendError(f"Elasticsearch at {self.shown_url} rejected a query: {reason}.")
                total = response["hits"].get("total", 0)
                total = total.get("value", 0) if isinstance(total, dict) else int(total)
                hits.append((response["hits"]["hits"], total))
        return hits

    def _text_index(self, name: str) -> tuple[str, dict[str, Any]]:
        """The concrete index a text search reads, and its LeakLens ``_meta``."""
        index, meta = self._locate(name).current
        if meta["index_type"] != "text":
            raise DataError(f"Index '{name}' is a {meta['index_type']} index; text search needs a text index.")
        return index, meta

    def _capped_lookup(
        self,
        index: str,
        keys_per_query: Sequence[Sequence[Hashable]],
        body: Callable[[Any, str | None, int], dict[str, Any]],
        wanted: Sequence[str],
        size: int,
        ranked: Callable[[Any, str | None, int], dict[str, Any]] | None = None,
    ) -> Candidates:
        """Per query, the union of the documents each of its keys finds (one ``body(key, dataset, size)`` each).

        Each distinct key is sent once over all training sets. Where ``size`` cut its hits short, it is sent
        again per training set (with ``ranked``, which orders the hits by relevance, when given), and those
        hits replace the first ones: the cap applies per key and training set."""
        unique: dict[Hashable, int] = {}
        for keys in keys_per_query:
            for key in keys:
                unique.setdefault(key, len(unique))
        keys = list(unique)
        docs: dict[int, StoredDoc] = {}
        per_key: list[set[int]] = []
        again: list[tuple[int, str | None]] = []
        split = list(wanted) if len(wanted) > 1 else [None]
        for k, (hits, total) in enumerate(self._msearch(index, [body(key, None, size) for key in keys])):
            if total > len(hits) and (ranked is not None or len(wanted) > 1):
                again.extend((k, d) for d in split)
                per_key.append(set())
            else:
                per_key.append(self._collect(hits, docs))
        if again:
            second = self._msearch(index, [(ranked or body)(keys[k], d, size) for k, d in again])
            for (k, _), (hits, _) in zip(again, second):
                per_key[k] |= self._collect(hits, docs)
        keep = set(wanted)
        docs = {i: d for i, d in docs.items() if d.dataset in keep}
        out = []
        for query in keys_per_query:
            found = set().union(*(per_key[unique[key]] for key in query))
            out.append(sorted(i for i in found if i in docs))
        return Candidates(out, docs)

    def _wanted(self, name: str, datasets: Sequence[str]) -> builtins.list[str]:
        return list(datasets) or list(self.info(name).datasets)

    @staticmethod
    def _phrase_body(phrase: tuple[str, ...], dataset: str | None, size: int) -> dict[str, Any]:
        return _capped_body({"match_phrase": {"tokens": {"query": joined(phrase)}}}, dataset, size)

    @staticmethod
    def _grams_body(hashes: tuple[int, ...], dataset: str | None, size: int) -> dict[str, Any]:
        """Documents holding any of the n-gram ``hashes``: one set lookup, unranked (the fast common case)."""
        return _capped_body({"terms": {_GRAMS: list(hashes)}}, dataset, size)

    @staticmethod
    def _ranked_grams_body(hashes: tuple[int, ...], dataset: str | None, size: int) -> dict[str, Any]:
        """The same documents, those sharing the most n-grams first (ties: lowest id): when ``size`` cuts the
        list, the documents most likely to cover the instance best are the ones kept."""
        should = [{"constant_score": {"filter": {"term": {_GRAMS: h}}}} for h in hashes]
        body = _capped_body({"bool": {"should": should, "minimum_should_match": 1}}, dataset, size)
        body["sort"] = [{"_score": "desc"}, {"doc_id": "asc"}]
        return body

    @staticmethod
    def _collect(hits: builtins.list[dict[str, Any]], docs: dict[int, StoredDoc]) -> set[int]:
        ids = set()
        for hit in hits:
            doc = _stored(hit["_source"])
            docs.setdefault(doc.doc_id, doc)
            ids.add(doc.doc_id)
        return ids

    def ngram_candidates(
        self, name: str, queries: Sequence[Sequence[tuple[str, ...]]], datasets: Sequence[str], search_size: int
    ) -> Candidates:
        """Over the ``grams`` hashes when the n-grams have the index's n-gram size: one ``terms`` query for a
        batch of test instances (``_batched_grams``), else one per instance; otherwise (other sizes, indexes
        built before ``grams``) one ``match_phrase`` per n-gram. At most ``search_size`` documents per
        instance and training set, those sharing the most n-grams first (ties: lowest id)."""
        index, meta = self._text_index(name)
        wanted = self._wanted(name, datasets)
        n = _gram_size(meta)
        if n is None or any(len(g) != n for grams in queries for g in grams):
            return self._capped_lookup(index, queries, self._phrase_body, wanted, search_size)
        grams = [set(g) for g in queries]
        hashes = [{gram_hash(g) for g in query} for query in grams]
        ids: list[list[int]] = [[] for _ in queries]
        docs: dict[int, StoredDoc] = {}
        for batch in _batches(hashes, _BATCH_TERMS):
            found = self._batched_grams(
                index, [hashes[i] for i in batch], [grams[i] for i in batch], wanted, search_size, n
            )
            if found is None:  # too many documents for one answer
                found = self._per_instance_grams(index, [hashes[i] for i in batch], wanted, search_size)
            for i, row in zip(batch, found.ids):
                ids[i] = row
            docs.update(found.docs)
        return Candidates(ids, docs)

    def _batched_grams(
        self,
        index: str,
        hashes: builtins.list[set[int]],
        grams: builtins.list[set[tuple[str, ...]]],
        wanted: Sequence[str],
        size: int,
        n: int,
    ) -> Candidates | None:
        """Every document holding any n-gram of a batch of instances, from one ``terms`` query, shared out to
        the instances by the n-grams themselves (``grams``, the n-grams behind ``hashes``); None when the
        documents are too many for one answer. Sharing out by n-gram rather than by hash skips hashing each
        document's n-grams again, the largest client-side cost of a batch.

        One sorted set of all the batch's hashes visits the point tree once: on 100k documents, 1,000
        instances took about a third of the time of one query per instance."""
        union = sorted(set().union(*hashes))
        if len(union) > _BATCH_TERMS:  # one instance alone has more: a terms query could not hold them all
            return None
        body = {
            "size": _BATCH_HITS,
            "_source": _SOURCE_FIELDS,
            "query": {"terms": {_GRAMS: union}},
            "track_total_hits": True,
        }
        ((hits, total),) = self._msearch(index, [body])
        if total > len(hits):
            return None
        owners: dict[tuple[str, ...], list[int]] = {}
        for q, query in enumerate(grams):
            for gram in query:
                owners.setdefault(gram, []).append(q)
        shared: list[dict[int, int]] = [{} for _ in hashes]
        docs: dict[int, StoredDoc] = {}
        keep = set(wanted)
        for hit in hits:
            doc = _stored(hit["_source"])
            if doc.dataset not in keep:
                continue
            docs[doc.doc_id] = doc
            for gram in set(ngrams(word_tokens(doc.text), n)):
                for q in owners.get(gram, ()):
                    shared[q][doc.doc_id] = shared[q].get(doc.doc_id, 0) + 1
        ids = [_most_shared(counts, docs, size) for counts in shared]
        used = {i for row in ids for i in row}
        return Candidates(ids, {i: d for i, d in docs.items() if i in used})

    def _per_instance_grams(
        self, index: str, hashes: builtins.list[set[int]], wanted: Sequence[str], size: int
    ) -> Candidates:
        """One ``terms`` query per instance (split past ``_TERMS_PER_QUERY`` hashes); ranked where capped."""
        ordered = [sorted(h) for h in hashes]
        keys = [[tuple(h[i : i + _TERMS_PER_QUERY]) for i in range(0, len(h), _TERMS_PER_QUERY)] for h in ordered]
        return self._capped_lookup(index, keys, self._grams_body, wanted, size, self._ranked_grams_body)

    def phrase_candidates(
        self, name: str, phrases: Sequence[tuple[str, ...]], datasets: Sequence[str], search_size: int
    ) -> Candidates:
        index, _ = self._text_index(name)
        keys = [[tuple(p)] for p in phrases]
        return self._capped_lookup(index, keys, self._phrase_body, self._wanted(name, datasets), search_size)

    def vector_search(
        self, name: str, vectors: np.ndarray, dataset: str, k: int, min_similarity: float | None = None
    ) -> builtins.list[builtins.list[VectorHit]]:
        index, meta = self._locate(name).current
        if meta["index_type"] != "vector":
            raise DataError(f"Index '{name}' is a {meta['index_type']} index; vector search needs a vector index.")
        # knn needs a server that has it and an index whose vectors were mapped for it (one built before an
        # upgrade to 8.4 holds them unindexed): otherwise the exact script.
        knn = self.has_knn and meta[_FIELDS].get("vector") == "dense_vector"
        if knn:
            bodies = [self._knn_body(v, dataset, k) for v in vectors]
        else:
            bodies = [self._script_body(v, dataset, k, min_similarity) for v in vectors]
        out = []
        for hits, _ in self._msearch(index, bodies):
            row = [VectorHit(_stored(h["_source"]), _similarity(h["_score"], knn)) for h in hits]
            row.sort(key=lambda h: (-h.similarity, h.doc.doc_id))
            if min_similarity is not None:
                row = [h for h in row if h.similarity >= min_similarity]
            out.append(row)
        return out

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


@dataclass
class _Located:
    """Where one LeakLens index lives in the cluster: ``(concrete index, leaklens _meta)`` pairs."""

    live: tuple[str, dict[str, Any]] | None = None
    """What the name points at: the aliased index, or an index built before aliases."""
    builds: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """Physical indexes of builds that never got the name (running, failed or cut off)."""

    @property
    def current(self) -> tuple[str, dict[str, Any]]:
        """The index the name reads from: the live one, else the newest unfinished build."""
        return self.live or max(self.builds, key=lambda b: b[0])


_FIELDS = "_fields"
"""Key added to a ``_meta`` read back from the server: the index's mapped fields and their types."""


def _similarity(score: float, knn: bool) -> float:
    """Cosine similarity from a hit's score: knn cosine scores are (1 + cos) / 2; the script returns cos + 1."""
    return 2.0 * score - 1.0 if knn else score - 1.0


def _gram_size(meta: dict[str, Any]) -> int | None:
    """The n-gram size of the index's ``grams`` field; None for indexes built before it existed."""
    if meta.get("index_type") != "text" or _GRAMS not in meta.get(_FIELDS, {}):
        return None
    size = meta.get("ngram_size")
    return int(size) if size else None


def _batches(hashes: Sequence[set[int]], max_terms: int) -> Iterable[list[int]]:
    """Positions of consecutive instances whose hashes add up to at most ``max_terms`` (an instance with more
    forms a batch of its own)."""
    batch: list[int] = []
    terms = 0
    for i, query in enumerate(hashes):
        if batch and terms + len(query) > max_terms:
            yield batch
            batch, terms = [], 0
        batch.append(i)
        terms += len(query)
    if batch:
        yield batch


def _most_shared(counts: dict[int, int], docs: dict[int, StoredDoc], size: int) -> list[int]:
    """The ``size`` documents of each training set sharing the most n-grams (ties: lowest id), by id: what
    the ranked per-instance query keeps."""
    kept: list[int] = []
    per_dataset: dict[str, int] = {}
    for doc_id in sorted(counts, key=lambda i: (-counts[i], i)):
        dataset = docs[doc_id].dataset
        if per_dataset.get(dataset, 0) < size:
            per_dataset[dataset] = per_dataset.get(dataset, 0) + 1
            kept.append(doc_id)
    return sorted(kept)


def _capped_body(query: dict[str, Any], dataset: str | None, size: int) -> dict[str, Any]:
    if dataset is not None:
        query = {"bool": {"must": query, "filter": {"term": {"dataset": dataset}}}}
    return {"size": size, "_source": _SOURCE_FIELDS, "query": query, "track_total_hits": True}


def _ndjson_batches(bodies: Sequence[dict[str, Any]], max_queries: int, max_bytes: int) -> Iterable[str]:
    """``msearch`` payloads (an empty header line, then the body, per query) of at most ``max_queries``
    queries and about ``max_bytes`` bytes each; a single larger query still goes alone."""
    lines: list[str] = []
    size = 0
    for body in bodies:
        entry = "{}\n" + json.dumps(body, separators=(",", ":")) + "\n"
        if lines and (len(lines) >= max_queries or size + len(entry) > max_bytes):
            yield "".join(lines)
            lines, size = [], 0
        lines.append(entry)
        size += len(entry)
    if lines:
        yield "".join(lines)


def _valid_name(name: str) -> bool:
    try:
        check_index_name(name)
    except DataError:
        return False
    return True


def _stored(source: dict[str, Any]) -> StoredDoc:
    return StoredDoc(int(source["doc_id"]), source["dataset"], int(source["row"]), source.get("turn"), source["text"])


def _short(exc: Exception) -> str:
    """The client's message in one readable line, without the repr of its connection objects."""
    text = re.sub(r"<[^<>]* object at 0x[0-9a-f]+>: ", "", " ".join(str(exc).split()))
    return text if len(text) < 300 else text[:300] + "..."


class _ElasticWriter(IndexWriter):
    def __init__(
        self, backend: ElasticsearchBackend, name: str, index_type: str, physical: str, meta: dict[str, Any]
    ) -> None:
        self.backend = backend
        self.name = name
        self.index = physical
        self.meta = meta
        self.index_type = index_type
        self.ngram_size = int(meta["leaklens"].get("ngram_size") or 0)
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
                tokens = word_tokens(doc.text)
                source["tokens"] = joined(tokens)
                if len(tokens) >= self.ngram_size:  # as the embedded index: shorter texts hold no n-gram
                    source[_GRAMS] = list({gram_hash(g) for g in ngrams(tokens, self.ngram_size)})
            else:  # add() refuses a vector index without one vector per document
                source["vector"] = [float(x) for x in cast(np.ndarray, vectors)[i]]
            yield {"_index": self.index, "_id": str(self.n_docs + i), "_source": source}

    def add(self, docs: Sequence[Document], vectors: np.ndarray | None = None) -> None:
        if self.index_type == "vector" and (vectors is None or len(vectors) != len(docs)):
            raise ValueError("a vector index needs one vector per document")
        es = _client_module()
        try:
            ok, errors = es.helpers.bulk(
                self.backend.client,
                self._actions(docs, vectors),
                chunk_size=_BULK_DOCS,
                max_chunk_bytes=_BULK_BYTES,
                raise_on_error=False,
            )
        except self.backend._errors as exc:
            raise BackendError(f"Elasticsearch at {self.backend.shown_url} failed to index: {_short(exc)}.") from exc
        if errors:
            raise BackendError(f"Elasticsearch rejected {len(errors)} documents, first: {str(errors[0])[:300]}.")
        self.n_docs += len(docs)

    def close(self) -> IndexInfo:
        client = self.backend.client
        # The build ran without refreshes (``refresh_interval: -1``); the cluster's default comes back now.
        restore = {"index": {"refresh_interval": None}}
        self.backend._call("finish the index", client.indices.put_settings, index=self.index, body=restore)
        self.backend._call("refresh the index", client.indices.refresh, index=self.index)
        # Make sure every document is visible before reporting the index as ready.
        for _ in range(50):
            if client.count(index=self.index)["count"] >= self.n_docs:
                break
            time.sleep(0.1)
        self._merge()
        self.backend._publish(self.name, self.index, self.meta)
        return self.backend.info(self.name)

    def _merge(self) -> None:
        """Merge the finished index into one segment per shard: it is never written again, and each n-gram
        lookup costs one seek per segment, so a short merge buys faster searches (docs/benchmarks.md, Overlap
        search). A merge that outlasts the wait goes on in the background; the index is complete."""
        es = _client_module()
        client = self.backend.client
        try:
            client.indices.forcemerge(index=self.index, max_num_segments=1, request_timeout=_MERGE_WAIT_S)
        except es.exceptions.ConnectionTimeout:
            logging.getLogger(__name__).info(
                "Elasticsearch is still merging index %s; searches work meanwhile.", self.index
            )
        except self.backend._errors as exc:
            raise BackendError(
                f"Elasticsearch at {self.backend.shown_url} failed to merge the index: {_short(exc)}."
            ) from exc

    def abort(self) -> None:
        try:
            self.backend.client.indices.delete(index=self.index, ignore=[404])
        except self.backend._errors:
            pass
