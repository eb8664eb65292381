"""The Elasticsearch n-gram path (issue 17, item 3): text indexes store the hashes of their word n-grams, one
``terms`` query per batch of test instances (or per instance, when a batch finds too many documents) finds
the candidates, ``msearch`` requests stay bounded, a capped search keeps the documents sharing the most
n-grams, and indexes built before the field are still searched correctly through ``match_phrase``. Against a
real Elasticsearch (the ``es_url`` fixture)."""

from __future__ import annotations

import json
import random

import pytest

from core.overlap.backends import elastic, get_backend
from core.overlap.backends.elastic import _MSEARCH_BYTES, PREFIX, _ndjson_batches
from core.overlap.indexing import build_index
from core.overlap.matching import SearchSettings, search
from core.overlap.sources import EvalInstance, EvalSet, TrainingSource
from core.overlap.tokenize import gram_hash, word_tokens
from tests.overlap.test_overlap_elastic import _view
from tests.overlap.test_overlap_es_safety import _legacy_index

pytestmark = pytest.mark.slow


def test_text_index_stores_ngram_hashes_and_restores_refresh(es_url, corpus, index_name):
    backend = get_backend("elasticsearch", es_url=es_url)
    build_index(backend, index_name, [TrainingSource(str(corpus.plain_path))], ngram_size=5)
    try:
        info = backend.info(index_name)
        assert info.ngram_size == 5  # what decontamination's re-check rebuilds with
        first = json.loads(corpus.plain_path.read_text(encoding="utf-8").splitlines()[0])["text"]
        gram = word_tokens(first)[:5]
        hits = backend.client.search(
            index=PREFIX + index_name, body={"query": {"term": {"grams": gram_hash(gram)}}, "_source": ["row"]}
        )
        assert 0 in [h["_source"]["row"] for h in hits["hits"]["hits"]]
        settings = backend.client.indices.get_settings(index=PREFIX + index_name)
        (index_settings,) = [s["settings"]["index"] for s in settings.values()]
        assert "refresh_interval" not in index_settings  # the build's "-1" is gone: the cluster default again
    finally:
        backend.delete(index_name)


@pytest.mark.parametrize("mode,n", [("ngram", 8), ("ngram", 13), ("exact", 8)])
def test_index_built_before_ngram_hashes_gives_identical_scores(
    es_url, corpus, test_set, tmp_path, index_name, mode, n
):
    """An index without ``grams`` (and no n-gram size in its ``_meta``) is searched by phrase, exactly."""
    plain = TrainingSource(str(corpus.plain_path))
    embedded = get_backend("embedded", root=tmp_path)
    build_index(embedded, "plain", [plain])
    backend = get_backend("elasticsearch", es_url=es_url)
    _legacy_index(backend, index_name, plain)
    try:
        assert backend.info(index_name).ngram_size is None
        settings = SearchSettings(mode=mode, ngram_size=n)
        ours = search(embedded, ["plain"], [test_set], settings)
        theirs = search(backend, [index_name], [test_set], settings)
        assert _view(theirs) == _view(ours)
        assert sum(m.value == 1.0 for m in theirs) >= len(corpus.exact_in_plain)
    finally:
        backend.delete(index_name)


@pytest.mark.parametrize("batch_hits", [2000, 5], ids=["batched", "per-instance"])
def test_capped_search_keeps_the_document_sharing_the_most_ngrams(
    es_url, tmp_path, index_name, batch_hits, monkeypatch
):
    """Nine short documents each hold one 8-gram of a 16-word instance, indexed before the one document that
    holds it all. With one candidate per query, a lookup per n-gram keeps a short document for each n-gram
    (coverage 0.5); ranking by shared n-grams keeps the full copy (1.0), whether the batch's documents are
    shared out by the client or (more than ``_BATCH_HITS`` of them) each instance is queried and ranked."""
    monkeypatch.setattr(elastic, "_BATCH_HITS", batch_hits)
    words = [f"word{i}" for i in range(16)]
    rows = [" ".join(["pad"] * 3 + words[j : j + 8] + ["pad"] * 3) for j in range(9)]
    rows.append("intro " + " ".join(words) + " outro")
    path = tmp_path / "train.jsonl"
    path.write_text("".join(json.dumps({"text": r}) + "\n" for r in rows), encoding="utf-8")
    backend = get_backend("elasticsearch", es_url=es_url)
    build_index(backend, index_name, [TrainingSource(str(path))])
    try:
        tests = EvalSet("t", [EvalInstance("0", " ".join(words))], "inline")
        (match,) = search(backend, [index_name], [tests], SearchSettings(search_size=1))
        assert match.value == 1.0
        assert match.best.row == 9
        (full,) = search(backend, [index_name], [tests], SearchSettings(search_size=100))
        assert full.value == 1.0
        assert len(full.matched_docs) == 10
    finally:
        backend.delete(index_name)


@pytest.mark.parametrize("batch_terms", [30_000, 500], ids=["batched", "per-instance"])
def test_long_instances_are_split_into_bounded_requests_with_identical_scores(
    es_url, tmp_path, index_name, batch_terms, monkeypatch
):
    """Instances of 1,200 words: in batches of instances, or (above ``_BATCH_TERMS`` hashes) one at a time with
    more n-grams than one ranked query may hold and several MB of queries in all; the requests are split, and
    the scores still equal the embedded index's."""
    monkeypatch.setattr(elastic, "_BATCH_TERMS", batch_terms)
    rng = random.Random(7)
    vocab = [f"v{i}" for i in range(3000)]
    docs = [" ".join(rng.choices(vocab, k=300)) for _ in range(60)]
    tests = []
    for k in range(200):
        words = rng.choices(vocab, k=1200)
        if k % 4 == 0:  # a training document pasted into the instance
            at = rng.randrange(0, 900)
            words[at : at + 300] = docs[k % 60].split()
        tests.append(EvalInstance(str(k), " ".join(words)))
    path = tmp_path / "train.jsonl"
    path.write_text("".join(json.dumps({"text": d}) + "\n" for d in docs), encoding="utf-8")
    test_set = EvalSet("long", tests, "inline")
    embedded = get_backend("embedded", root=tmp_path / "indexes")
    build_index(embedded, "long", [TrainingSource(str(path))])
    backend = get_backend("elasticsearch", es_url=es_url)
    build_index(backend, index_name, [TrainingSource(str(path))])
    try:
        ours = search(embedded, ["long"], [test_set], SearchSettings())
        theirs = search(backend, [index_name], [test_set], SearchSettings())
        assert _view(theirs) == _view(ours)
        assert sum(m.value >= 0.25 for m in theirs) == 50
    finally:
        backend.delete(index_name)


def test_msearch_payloads_are_bounded_in_queries_and_bytes():
    bodies = [{"query": {"terms": {"grams": list(range(k * 50))}}} for k in range(1, 40)]
    payloads = list(_ndjson_batches(bodies, max_queries=7, max_bytes=4000))
    lines = [line for p in payloads for line in p.splitlines()]
    assert [json.loads(line) for line in lines[1::2]] == bodies
    assert set(lines[0::2]) == {"{}"}
    for payload in payloads:
        queries = payload.count("\n") // 2
        assert queries <= 7
        assert len(payload) <= 4000 or queries == 1
    assert len(payloads) > len(bodies) // 7 + 1  # the byte bound split more than the count alone
    assert _MSEARCH_BYTES <= 8 << 20
