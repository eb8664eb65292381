"""Order patterns a model could know without the file: found where they are, not where they are not."""

from __future__ import annotations

import random

from core.benchmark_order.confounds import order_patterns
from core.benchmark_order.shards import shard_bounds


def _words(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice("abcdefghij") for _ in range(8)) for _ in range(n)]


def test_a_random_order_shows_no_pattern():
    texts = _words(60, 0)
    rows = [{"id": i, "question": t, "difficulty": random.Random(i).randint(1, 5)} for i, t in enumerate(texts)]
    assert order_patterns(rows, texts, shard_bounds(60, 15), ["question"]) == []


def test_a_column_sorted_within_shards_is_a_pattern():
    texts = _words(60, 1)
    rows = [{"question": t, "difficulty": i % 4} for i, t in enumerate(texts)]  # rises inside every shard of 4
    (pattern,) = order_patterns(rows, texts, shard_bounds(60, 15), ["question"])
    assert "difficulty" in pattern.reason() and "rises" in pattern.reason()


def test_subjects_in_long_blocks_are_no_pattern_within_shards():
    texts = _words(60, 2)
    rows = [{"question": t, "subject": ["art", "bio", "chem"][i // 20]} for i, t in enumerate(texts)]
    assert order_patterns(rows, texts, shard_bounds(60, 15), ["question"]) == []


def test_alphabetical_order_and_numbered_examples_are_patterns():
    texts = sorted(_words(60, 3))
    reasons = [p.reason() for p in order_patterns([{"q": t} for t in texts], texts, shard_bounds(60, 15), ["q"])]
    assert any("alphabetical" in r for r in reasons)
    numbered = [f"Question {i + 1}: {w}" for i, w in enumerate(_words(60, 4))]
    found = order_patterns([{"q": t} for t in numbered], numbered, shard_bounds(60, 15), ["q"])
    assert any("first number" in p.reason() for p in found)


def test_a_row_id_counts_only_when_the_text_shows_it():
    texts = _words(60, 5)
    rows = [{"id": i, "question": t} for i, t in enumerate(texts)]
    assert order_patterns(rows, texts, shard_bounds(60, 15), ["question"]) == []
    shown = order_patterns(rows, texts, shard_bounds(60, 15), ["id", "question"])
    assert any("'id'" in p.reason() for p in shown)
