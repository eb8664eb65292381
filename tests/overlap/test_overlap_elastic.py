"""The Elasticsearch backend against a real server (started by the ``es_url`` fixture), compared with the
embedded backend on the same corpus."""

import os

import pytest

from core.errors import BackendError, DataError
from core.overlap.backends import get_backend
from core.overlap.backends.elastic import redact_url
from core.overlap.indexing import build_index
from core.overlap.matching import SearchSettings, search
from core.overlap.sources import TrainingSource
from tests.overlap.conftest import TEXT_INDEX

pytestmark = pytest.mark.slow


def _view(matches):
    return [
        (
            m.eval_name,
            m.test_id,
            m.train_dataset,
            m.value,
            m.best.doc_id if m.best else None,
            m.test_spans,
            m.train_spans,
            [r.doc_id for r in m.matched_docs],
        )
        for m in matches
    ]


@pytest.mark.parametrize("mode,n", [("ngram", 8), ("ngram", 13), ("exact", 8)])
def test_backends_give_identical_results(embedded, elastic, test_set, mode, n):
    settings = SearchSettings(mode=mode, ngram_size=n)
    ours = search(embedded, [TEXT_INDEX], [test_set], settings)
    theirs = search(elastic, [TEXT_INDEX], [test_set], settings)
    assert _view(theirs) == _view(ours)
    assert sum(m.value == 1.0 for m in ours) >= 12


def test_index_info_list_and_delete(elastic, embedded, corpus, index_name):
    info = elastic.info(TEXT_INDEX)
    assert info.backend == "elasticsearch"
    assert info.index_type == "text"
    assert info.datasets == embedded.info(TEXT_INDEX).datasets == {"train_plain": 175, "train_chat": 60}
    assert info.n_docs == 235
    assert info.size_bytes > 0
    assert [s["name"] for s in info.sources] == ["train_plain", "train_chat"]
    built = build_index(elastic, index_name, [TrainingSource(str(corpus.plain_path))])
    assert index_name in [i.name for i in elastic.list()]
    again = build_index(elastic, index_name, [TrainingSource(str(corpus.plain_path))])  # same file, same settings
    assert again.reused and not built.reused
    assert again.info.n_docs == built.info.n_docs
    with pytest.raises(DataError, match="already exists"):
        build_index(elastic, index_name, [TrainingSource(str(corpus.plain_path))], ngram_size=5)
    elastic.delete(index_name)
    assert index_name not in [i.name for i in elastic.list()]
    with pytest.raises(DataError, match=f"No elasticsearch index named '{index_name}'"):
        elastic.delete(index_name)


def test_search_size_caps_candidates(es_url, tmp_path, index_name):
    """Seven documents hold the same sentence; a cap of 3 per n-gram sees only 3 of them."""
    import json

    sentence = "the quick brown fox jumps over the lazy dog near the quiet river bank today"
    path = tmp_path / "dups.jsonl"
    path.write_text("".join(json.dumps({"text": f"{k} {sentence}"}) + "\n" for k in range(7)), encoding="utf-8")
    backend = get_backend("elasticsearch", es_url=es_url)
    build_index(backend, index_name, [TrainingSource(str(path))])
    try:
        from core.overlap.sources import EvalInstance, EvalSet

        tests = EvalSet("t", [EvalInstance("0", sentence)], "inline")
        (capped,) = search(backend, [index_name], [tests], SearchSettings(search_size=3))
        (full,) = search(backend, [index_name], [tests], SearchSettings(search_size=100))
        assert capped.value == full.value == 1.0
        assert len(capped.matched_docs) == 3
        assert len(full.matched_docs) == 7
    finally:
        backend.delete(index_name)


def test_unreachable_server_names_url_without_password(monkeypatch):
    monkeypatch.setenv("ELASTIC_PASSWORD", "s3cret-pw")
    with pytest.raises(BackendError) as info:
        get_backend("elasticsearch", es_url="http://elastic:s3cret-pw@127.0.0.1:9")
    message = str(info.value)
    assert "unreachable at http://127.0.0.1:9" in message
    assert "s3cret" not in message
    assert redact_url("https://u:p@host:9200/x?y=1") == "https://host:9200/x"


def test_missing_url_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("ES_URL", raising=False)
    with pytest.raises(BackendError, match="--es-url or set ES_URL"):
        get_backend("elasticsearch")


def test_server_version_path(elastic):
    # The local server is the 7.x OSS build: exact script_score, no knn.
    assert elastic.major == 7
    assert not elastic.has_knn
    assert os.environ.get("ES_URL") or elastic.url.startswith("http://127.0.0.1:")
