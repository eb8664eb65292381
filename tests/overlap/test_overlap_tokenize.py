from core.overlap.tokenize import gram_hash, joined, ngrams, word_spans, word_tokens
from tests.helpers.overlap import contains_phrase


def test_word_tokens_lowercase_and_drop_punctuation():
    text = "The Cat's 2 hats, e.g. RED!"
    assert word_tokens(text) == ["the", "cat", "s", "2", "hats", "e", "g", "red"]
    assert [text[s:e] for s, e in word_spans(text)] == ["The", "Cat", "s", "2", "hats", "e", "g", "RED"]


def test_ngrams_and_short_sequences():
    assert ngrams(["a", "b", "c"], 2) == [("a", "b"), ("b", "c")]
    assert ngrams(["a", "b"], 3) == [("a", "b")]
    assert ngrams([], 3) == []


def test_gram_hash_is_stable_and_signed_64_bit():
    # Fixed value: the index on disk depends on it staying the same across processes and versions.
    assert gram_hash(("a", "b")) == int.from_bytes(
        __import__("hashlib").blake2b(b"a b", digest_size=8).digest(), "big", signed=True
    )
    assert -(2**63) <= gram_hash(("x",) * 8) < 2**63
    assert gram_hash(("ab", "c")) != gram_hash(("a", "bc"))


def test_contains_phrase_respects_token_boundaries():
    assert contains_phrase(["the", "cat", "sat"], ["cat", "sat"])
    assert not contains_phrase(["the", "cats", "sat"], ["cat", "sat"])
    assert not contains_phrase(["a"], [])
    assert joined(["a", "b"]) == "a b"
