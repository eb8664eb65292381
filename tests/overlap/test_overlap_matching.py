import pytest

from core.errors import DataError
from core.overlap.matching import SearchSettings, ngram_coverage, search, token_char_spans
from tests.overlap.brute import all_documents, brute_best
from tests.overlap.conftest import TEXT_INDEX, training_sources


def test_ngram_coverage_by_hand():
    test = "a b c d e f".split()
    doc = "x a b c y d e f".split()
    cov = ngram_coverage(test, doc, 3)
    # "a b c" and "d e f" occur; "b c d", "c d e" do not: all six tokens covered.
    assert cov.value == 1.0
    assert cov.doc_tokens == [1, 2, 3, 5, 6, 7]
    cov = ngram_coverage(test, "a b c".split(), 3)
    assert cov.value == pytest.approx(3 / 6)
    assert cov.test_tokens == [0, 1, 2]
    # Shorter than n: the whole instance must occur.
    assert ngram_coverage(["b", "c"], doc, 3).value == 1.0
    assert ngram_coverage(["c", "b"], doc, 3).value == 0.0
    assert ngram_coverage([], doc, 3).value == 0.0


def test_token_char_spans_join_adjacent_tokens():
    text = "Hello, big world; bye"
    assert token_char_spans(text, [0, 1, 3]) == [(0, 10), (18, 21)]


@pytest.mark.parametrize("n", [8, 13])
def test_embedded_ngram_scores_equal_brute_force(embedded, corpus, test_set, n):
    matches = search(embedded, [TEXT_INDEX], [test_set], SearchSettings(ngram_size=n))
    expected = brute_best(test_set, all_documents(training_sources(corpus)), n)
    got = {(m.test_id, m.train_dataset): (m.value, m.best.doc_id if m.best else None) for m in matches}
    assert got.keys() == expected.keys()
    for key, (value, doc_id) in expected.items():
        assert got[key][0] == pytest.approx(value, abs=1e-12), key
        assert got[key][1] == doc_id, key
    assert sum(v > 0 for v, _ in expected.values()) >= 15


def test_planted_copies_are_found(embedded, corpus, test_set):
    matches = search(embedded, [TEXT_INDEX], [test_set], SearchSettings())
    by = {(m.test_id, m.train_dataset): m for m in matches}
    for i in corpus.exact_in_plain:
        m = by[(f"q{i}", "train_plain")]
        assert m.value == 1.0
        # The highlighted span in the training document is the planted question itself.
        (start, end), *_ = m.train_spans
        assert corpus.questions[i].startswith(m.best.text[start:end][:20])
    for i in corpus.user_in_chat:
        assert by[(f"q{i}", "train_chat")].value == 1.0
    for i in corpus.assistant_in_chat:
        assert by[(f"q{i}", "train_chat")].value == 0.0  # only user turns were indexed
    short = by[(f"q{len(corpus.questions) - 2}", "train_plain")]
    assert short.value == 1.0
    assert short.test_spans == [(0, len(corpus.questions[-2]) - 1)]
    assert by[(f"q{len(corpus.questions) - 1}", "train_plain")].value == 0.0


def test_near_copy_covers_all_but_the_changed_word(embedded, corpus, test_set):
    from core.overlap.tokenize import word_tokens

    matches = search(embedded, [TEXT_INDEX], [test_set], SearchSettings())
    by = {(m.test_id, m.train_dataset): m for m in matches}
    long_ones = [i for i in corpus.near_in_plain if len(word_tokens(corpus.questions[i])) >= 40]
    assert long_ones
    for i in long_ones:
        m = by[(f"q{i}", "train_plain")]
        assert "zzplanted" in m.best.text
        n_tokens = len(word_tokens(corpus.questions[i]))
        assert (n_tokens - 1) / n_tokens <= m.value <= 1.0
        # The changed word is never highlighted in the training document.
        planted = m.best.text.index("zzplanted")
        assert not any(s <= planted < e for s, e in m.train_spans)
        assert m.train_spans


def test_threshold_turns_scores_into_flags(embedded, test_set):
    raw = search(embedded, [TEXT_INDEX], [test_set], SearchSettings())
    flagged = search(embedded, [TEXT_INDEX], [test_set], SearchSettings(match_threshold=0.9))
    for r, f in zip(raw, flagged):
        assert f.score == (1.0 if r.value >= 0.9 else 0.0)
        assert f.value == r.value


def test_exact_mode_needs_the_whole_instance(embedded, corpus, test_set):
    matches = search(embedded, [TEXT_INDEX], [test_set], SearchSettings(mode="exact"))
    found = sorted(m.test_id for m in matches if m.value == 1.0)
    expected = [f"q{i}" for i in corpus.exact_in_plain + corpus.user_in_chat] + [f"q{len(corpus.questions) - 2}"]
    assert found == sorted(expected)


def test_settings_and_index_errors(embedded, test_set):
    with pytest.raises(DataError, match="at least 8"):
        search(embedded, [TEXT_INDEX], [test_set], SearchSettings(ngram_size=5))
    with pytest.raises(DataError, match="Mode must be one of"):
        SearchSettings(mode="fuzzy")
    with pytest.raises(DataError, match=r"threshold must lie in \[0, 1\]"):
        SearchSettings(match_threshold=2)
    with pytest.raises(DataError, match="needs a vector index"):
        search(embedded, [TEXT_INDEX], [test_set], SearchSettings(mode="vector"))
    with pytest.raises(DataError, match=f"No embedded index named 'nope'. Existing indexes: {TEXT_INDEX}"):
        search(embedded, ["nope"], [test_set])
