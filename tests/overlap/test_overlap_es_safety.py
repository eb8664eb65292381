"""Nothing a user built on Elasticsearch is lost or silently wrong: ``--overwrite`` builds beside the old index
and switches an alias only at the end; a build the server never finished is marked incomplete, listed as
such, refused by search, and rebuilt without deleting it first (issue 16, items 1 and 2)."""

from __future__ import annotations

import json

import pytest

from core.cli import main
from core.errors import BackendError, DataError
from core.overlap.backends import get_backend
from core.overlap.backends.elastic import PREFIX, _client_module
from core.overlap.indexing import build_index
from core.overlap.matching import SearchSettings, search
from core.overlap.sources import TrainingReader, TrainingSource
from core.overlap.tokenize import joined, word_tokens
from tests.overlap.es_server import EsServer

pytestmark = pytest.mark.slow


def _physical(backend, name: str) -> list[str]:
    """The concrete ES indexes that hold ``name`` (its live index and any unfinished builds)."""
    found = backend.client.indices.get(index=f"{PREFIX}{name}*", ignore=[404])
    return sorted(k for k in found if k == PREFIX + name or k.startswith(f"{PREFIX}{name}."))


def test_overwrite_with_a_typo_keeps_the_old_index_searchable(es_url, corpus, test_set, index_name):
    backend = get_backend("elasticsearch", es_url=es_url)
    plain = TrainingSource(str(corpus.plain_path))
    build_index(backend, index_name, [plain])
    before = search(backend, [index_name], [test_set], SearchSettings())
    try:
        with pytest.raises(DataError, match="no field 'body'"):
            build_index(
                backend, index_name, [TrainingSource(str(corpus.plain_path), text_field="body")], overwrite=True
            )
        info = backend.info(index_name)
        assert info.n_docs == 175
        assert info.complete
        after = search(backend, [index_name], [test_set], SearchSettings())
        assert [m.value for m in after] == [m.value for m in before]
        assert sum(m.value == 1.0 for m in after) >= len(corpus.exact_in_plain)
        assert len(_physical(backend, index_name)) == 1  # the failed build left nothing behind

        chat = TrainingSource(str(corpus.chat_path), messages_field="messages", query_filter=("role", "user"))
        build_index(backend, index_name, [chat], overwrite=True)
        assert backend.info(index_name).datasets == {"train_chat": 60}
        assert len(_physical(backend, index_name)) == 1  # the old physical index is gone after the switch
    finally:
        backend.delete(index_name)
    assert _physical(backend, index_name) == []


def _legacy_index(backend, name: str, source: TrainingSource, *, finished: bool = True) -> None:
    """An index as LeakLens built it before aliases: a physical index named like the index, no marker."""
    es = _client_module()
    meta = {"leaklens": {"index_type": "text", "model": None, "dims": None, "sources": [source.to_dict()]}}
    backend.client.indices.create(
        index=PREFIX + name,
        body={
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
                    "vector": {"type": "object", "enabled": False},
                },
            },
        },
    )
    docs = list(TrainingReader(source).documents())
    es.helpers.bulk(
        backend.client,
        (
            {
                "_index": PREFIX + name,
                "_id": str(i),
                "_source": {
                    "doc_id": i,
                    "dataset": d.dataset,
                    "row": d.row,
                    "turn": d.turn,
                    "text": d.text,
                    "tokens": joined(word_tokens(d.text)),
                },
            }
            for i, d in enumerate(docs)
        ),
    )
    backend.client.indices.refresh(index=PREFIX + name)
    if finished:
        backend.client.indices.put_settings(index=PREFIX + name, body={"refresh_interval": "1s"})


def test_indexes_built_before_aliases_are_listed_searched_and_replaced(es_url, corpus, test_set, index_name):
    backend = get_backend("elasticsearch", es_url=es_url)
    plain = TrainingSource(str(corpus.plain_path))
    _legacy_index(backend, index_name, plain)
    try:
        (info,) = [i for i in backend.list() if i.name == index_name]
        assert info.n_docs == 175
        assert info.complete
        assert sum(m.value == 1.0 for m in search(backend, [index_name], [test_set], SearchSettings())) >= 8
        with pytest.raises(DataError, match="already exists"):
            build_index(backend, index_name, [plain])
        with pytest.raises(DataError, match="no field 'body'"):
            build_index(
                backend, index_name, [TrainingSource(str(corpus.plain_path), text_field="body")], overwrite=True
            )
        assert backend.info(index_name).n_docs == 175
        chat = TrainingSource(str(corpus.chat_path), messages_field="messages", query_filter=("role", "user"))
        build_index(backend, index_name, [chat], overwrite=True)
        assert backend.info(index_name).datasets == {"train_chat": 60}
        assert [p for p in _physical(backend, index_name) if p == PREFIX + index_name] == []
    finally:
        backend.delete(index_name)
    assert _physical(backend, index_name) == []


def test_an_unfinished_legacy_index_counts_as_incomplete(es_url, corpus, index_name):
    backend = get_backend("elasticsearch", es_url=es_url)
    plain = TrainingSource(str(corpus.plain_path))
    _legacy_index(backend, index_name, plain, finished=False)  # refresh_interval still -1: its build never ended
    try:
        assert not backend.info(index_name).complete
        build_index(backend, index_name, [plain])  # no "already exists": an incomplete index is rebuilt
        assert backend.info(index_name).complete
    finally:
        backend.delete(index_name)


@pytest.fixture()
def own_es():
    """A server of this test's own: stopping the session server would break every other ES test."""
    server = EsServer.start()
    try:
        yield server
    finally:
        server.stop()


def test_a_build_the_server_never_finished_is_incomplete_refused_and_rebuilt(own_es, tmp_path, capsys):
    sentence = "the quick brown fox jumps over the lazy dog near the quiet river bank today"
    path = tmp_path / "big.jsonl"
    path.write_text(
        "".join(json.dumps({"text": f"document {k} says {sentence} {k}"}) + "\n" for k in range(2500)), encoding="utf-8"
    )
    source = TrainingSource(str(path))
    backend = get_backend("elasticsearch", es_url=own_es.url)

    def stop_the_server(done: int, total: int) -> None:
        if done >= 1000 and own_es.workdir.joinpath("es.pid").exists():
            own_es.kill()

    with pytest.raises(BackendError):
        build_index(backend, "big", [source], progress=stop_the_server)
    own_es.restart()
    backend = get_backend("elasticsearch", es_url=own_es.url)
    (info,) = backend.list()
    assert info.name == "big"
    assert not info.complete
    assert info.n_docs < 2500

    assert main(["overlap", "list", "--backend", "elasticsearch", "--es-url", own_es.url]) == 0
    assert "INCOMPLETE" in capsys.readouterr().out

    from core.overlap.sources import EvalInstance, EvalSet

    tests = EvalSet("t", [EvalInstance("0", sentence)], "inline")
    with pytest.raises(DataError, match=r"incomplete.*overlap index --name big"):
        search(backend, ["big"], [tests], SearchSettings())

    build_index(backend, "big", [source])  # restarts the build: no "already exists; delete it first"
    info = backend.info("big")
    assert info.complete
    assert info.n_docs == 2500
    (match,) = search(backend, ["big"], [tests], SearchSettings())
    assert match.value == 1.0
    assert _physical(backend, "big")
    assert len(_physical(backend, "big")) == 1
