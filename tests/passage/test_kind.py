"""A passage read against the fresh passages nearest to it in kind: the neighbours, the kind-adjusted scores (checked
against hand-computed values and a slow path), the words, and the shipped embeddings of the fresh set."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.passage.calibration import FreshCalibration, fresh_set_fingerprint, load_fresh_passages
from core.passage.kind import (
    EMBEDDINGS_META_PATH,
    EMBEDDINGS_PATH,
    KIND_NEIGHBOURS,
    adjusted_fresh,
    embed,
    fresh_embeddings,
    kind_words,
    nearest,
)
from core.passage.placement import place_passage, placement_finding


def _unit(rows) -> np.ndarray:
    array = np.asarray(rows, dtype=np.float32)
    return array / np.linalg.norm(array, axis=1, keepdims=True)


def test_the_nearest_are_the_most_similar_first_ties_by_position():
    vectors = _unit([[1, 0], [0, 1], [1, 1], [1, 0], [-1, 0]])
    assert list(nearest(np.asarray([1, 0], dtype=np.float32), vectors, 3)) == [0, 3, 2]
    assert len(nearest(np.asarray([1, 0], dtype=np.float32), vectors, 99)) == 5


def test_adjusted_scores_leave_each_passage_out_and_match_hand_computed_medians():
    # Two kinds: three passages near (1, 0) and three near (0, 1). With k = 2 each passage's two nearest are the
    # other two of its kind, so its adjusted score is its score minus the median (mean of two) of theirs.
    vectors = _unit([[1, 0.01], [1, 0.02], [1, 0.03], [0.01, 1], [0.02, 1], [0.03, 1]])
    scores = np.asarray([-1.0, -2.0, -3.0, -5.0, -6.0, -10.0])
    got = adjusted_fresh(scores, vectors, k=2)
    want = [-1 - (-2.5), -2 - (-2.0), -3 - (-1.5), -5 - (-8.0), -6 - (-7.5), -10 - (-5.5)]
    assert got == pytest.approx(want)


def test_kind_words_name_the_commonest_kinds():
    assert kind_words(["recipe"] * 30 + ["instructions"] * 10) == "recipes and instructions"
    assert kind_words(["recipe"] * 35 + ["instructions"] * 5) == "recipes"
    assert kind_words(["", ""]) == "passages"


def _calibration(vectors: np.ndarray, loss: list[float], forms: list[str]) -> FreshCalibration:
    ids = tuple(f"f{i}" for i in range(len(loss)))
    return FreshCalibration(
        "m",
        "run",
        ids,
        (100,) * len(loss),
        {"loss": tuple(loss)},
        {"loss": "Loss"},
        forms=tuple(forms),
        embeddings=vectors,
    )


def test_a_predictable_kind_is_read_against_its_own_kind_and_equals_a_slow_path():
    """60 fresh recipes (predictable: loss about 2) and 60 fresh stories (loss about 4). A recipe at loss 2.1 is far
    more predictable than the stories but ordinary among recipes: plain placement would call it; by kind it is
    none. The adjusted percentile equals one computed the slow way, passage by passage."""
    rng = np.random.default_rng(3)
    recipes = _unit(np.c_[np.ones(60), rng.normal(0, 0.05, 60), np.zeros(60)])
    stories = _unit(np.c_[np.zeros(60), rng.normal(0, 0.05, 60), np.ones(60)])
    vectors = np.vstack([recipes, stories])
    loss = list(-(2 + rng.normal(0, 0.3, 60))) + list(-(4 + rng.normal(0, 0.3, 60)))
    calibration = _calibration(vectors, loss, ["recipe"] * 60 + ["narrative"] * 60)
    vector = _unit([[1, 0.0, 0]])[0]
    plain = place_passage({"loss": -2.1}, 100, calibration, minimum=1)
    by_kind = place_passage({"loss": -2.1}, 100, calibration, minimum=1, vector=vector)
    (p,), (k,) = plain.methods, by_kind.methods
    assert p.percentile > 45 and not p.kind_adjusted
    assert k.kind_adjusted and k.kind_words == "recipes" and k.n_kind == KIND_NEIGHBOURS
    assert set(k.kind_positions) < set(range(60))  # its neighbours are recipes
    # slow path: every fresh passage against its own 40 nearest others, by explicit sorting
    scores = np.asarray(loss)
    sims = vectors @ vectors.T
    adjusted = []
    for i in range(len(scores)):
        order = sorted((j for j in range(len(scores)) if j != i), key=lambda j: (-round(float(sims[i, j]), 6), j))
        adjusted.append(scores[i] - np.median(scores[order[:KIND_NEIGHBOURS]]))
    own_order = sorted(range(len(scores)), key=lambda j: (-round(float(vectors[j] @ vector), 6), j))
    own = -2.1 - np.median(scores[own_order[:KIND_NEIGHBOURS]])
    assert k.adjusted == pytest.approx(own)
    assert k.n_at_least == sum(a >= own for a in adjusted)
    finding = placement_finding(by_kind)
    assert finding.level == "none", finding.headline
    assert "freshly written recipes of similar length nearest to it in kind" in finding.headline
    # A recipe far more predictable than every fresh recipe still stands out.
    famous = place_passage({"loss": -0.5}, 100, calibration, minimum=1, vector=vector)
    assert placement_finding(famous).level == "strong"  # above all 120 adjusted scores: chance 1/121 < 1%
    assert placement_finding(famous).headline.startswith("More predictable than all 40 freshly written recipes")


def test_the_shipped_embeddings_belong_to_the_shipped_set_and_equal_a_fresh_embedding():
    passages = load_fresh_passages()
    meta = json.loads(EMBEDDINGS_META_PATH.read_text(encoding="utf-8"))
    assert meta["passages"] == fresh_set_fingerprint(passages), "rebuild with `make calibration`"
    assert meta["n"] == len(passages)
    shipped = fresh_embeddings(fresh_set_fingerprint(passages), [p.text for p in passages])
    assert shipped.shape == (len(passages), 384)
    assert EMBEDDINGS_PATH.stat().st_size < 2_000_000
    sample = [0, 500, 1200, len(passages) - 1]
    again = embed([passages[i].text for i in sample])
    assert np.sum(again * shipped[sample], axis=1) == pytest.approx(1.0, abs=2e-3)
