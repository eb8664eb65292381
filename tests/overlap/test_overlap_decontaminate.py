import json

import pytest

from core.overlap.backends import get_backend
from core.overlap.decontaminate import decontaminate
from core.overlap.indexing import build_index
from core.overlap.matching import SearchSettings, search
from core.overlap.sources import EvalInstance, EvalSet, TrainingReader, TrainingSource
from core.overlap.tokenize import word_tokens
from tests.overlap.brute import brute_coverage
from tests.overlap.conftest import TEXT_INDEX, training_sources


def _expected_rows(source: TrainingSource, test_set, threshold: float, n: int = 8) -> set[int]:
    tests = [word_tokens(i.text) for i in test_set.instances]
    return {
        doc.row
        for doc in TrainingReader(source).documents()
        if any(brute_coverage(t, word_tokens(doc.text), n) >= threshold for t in tests)
    }


def test_embedded_decontamination_removes_exactly_the_matching_rows(embedded, corpus, test_set, tmp_path):
    settings = SearchSettings(match_threshold=0.5)
    matches = search(embedded, [TEXT_INDEX], [test_set], settings)
    cleaned = {
        c.dataset: c
        for c in decontaminate(embedded, matches, [test_set], settings, tmp_path, recheck=True, drop_malformed=True)
    }
    assert cleaned["train_plain"].dropped_lines == [corpus.malformed_line]  # dropped on request, and listed
    plain, chat = training_sources(corpus)
    expected_plain = _expected_rows(plain, test_set, 0.5)
    assert cleaned["train_plain"].n_removed == len(expected_plain) >= 12
    assert cleaned["train_chat"].n_removed == len(corpus.user_in_chat)
    assert cleaned["train_plain"].still_matching == cleaned["train_chat"].still_matching == 0
    kept = [json.loads(x) for x in cleaned["train_plain"].path.read_text(encoding="utf-8").splitlines()]
    original = list(TrainingReader(plain).rows())
    assert len(kept) == len(original) - len(expected_plain)
    assert kept == [row for i, row in original if i not in expected_plain]
    chat_rows = [json.loads(x) for x in cleaned["train_chat"].path.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in chat_rows] == list(range(len(corpus.user_in_chat), 60))


def test_elasticsearch_decontamination_agrees_and_rechecks(elastic, embedded, test_set, tmp_path):
    settings = SearchSettings(match_threshold=0.5)
    ours = decontaminate(
        embedded, search(embedded, [TEXT_INDEX], [test_set], settings), [test_set], settings, tmp_path / "a"
    )
    theirs = decontaminate(
        elastic, search(elastic, [TEXT_INDEX], [test_set], settings), [test_set], settings, tmp_path / "b"
    )
    assert [(c.dataset, c.n_rows, c.n_removed) for c in ours] == [(c.dataset, c.n_rows, c.n_removed) for c in theirs]
    assert all(c.still_matching is None for c in ours)  # embedded: complete by construction
    assert all(c.still_matching == 0 for c in theirs)
    for a, b in zip(ours, theirs):
        assert a.path.read_text() == b.path.read_text()


@pytest.mark.slow
def test_capped_search_leaves_matches_that_the_recheck_reports(es_url, tmp_path, index_name):
    sentence = "the quick brown fox jumps over the lazy dog near the quiet river bank today"
    path = tmp_path / "dups.jsonl"
    path.write_text("".join(json.dumps({"text": f"{k} {sentence}"}) + "\n" for k in range(7)), encoding="utf-8")
    backend = get_backend("elasticsearch", es_url=es_url)
    build_index(backend, index_name, [TrainingSource(str(path))])
    try:
        tests = EvalSet("t", [EvalInstance("0", sentence)], "inline")
        settings = SearchSettings(search_size=3)
        (cleaned,) = decontaminate(
            backend, search(backend, [index_name], [tests], settings), [tests], settings, tmp_path / "o"
        )
        assert cleaned.n_removed == 3
        assert cleaned.still_matching == 1
    finally:
        backend.delete(index_name)
    assert not [i for i in backend.list() if i.name.startswith("recheck-")]
