"""Reference-model, neighbourhood and ReCaLL detectors, neighbour generation and the auxiliary passes."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
import torch

from core.engine.bundled import tiny_random_model
from core.engine.models import wrap_model
from core.engine.records import TokenRecords
from core.engine.scoring import TruncationWarning, score_texts
from core.methods import AuxiliaryRecords, MethodConfigError, default_methods, parse_method, score_all
from core.methods.auxiliary import auxiliary_cost, compute_auxiliary, needed_passes
from core.methods.neighbourhood import Neighbourhood
from core.methods.neighbours import (
    WordSlot,
    build_neighbours,
    count_words,
    generate_neighbours,
    scored_text,
    top_alternatives,
    word_slots,
)
from core.methods.recall import DEFAULT_PREFIX, Recall
from core.methods.reference import DEFAULT_REFERENCE, ReferenceModel

PASSAGES = [
    "The old lighthouse keeper climbed the stairs every evening to light the lamp.",
    "Rain fell on the quiet harbour while the fishing boats waited for the tide.",
    "She opened the letter slowly, afraid of what the bank had decided this time.",
]


def records_of(logprobs: list[float], token_ids: list[int] | None = None, text: str = "synthetic") -> TokenRecords:
    """Hand-made records: only the fields the detectors read carry meaning."""
    n = len(logprobs)
    lp = np.asarray(logprobs, dtype=np.float64)
    return TokenRecords(
        text=text,
        token_ids=np.asarray(token_ids if token_ids is not None else range(100, 100 + n), dtype=np.int64),
        offsets=np.zeros((n, 2), dtype=np.int64),
        logprobs=lp,
        mean_logprob=lp,
        std_logprob=np.ones(n),
        entropy=-lp,
        rank=np.ones(n, dtype=np.int64),
        kgram_logprobs=None,
    )


# ---------- detectors on hand-made records ----------


def test_reference_score_is_reference_loss_minus_target_loss():
    target = records_of([-1.0, -2.0, -3.0])  # loss 2
    reference = records_of([-3.0, -3.0], token_ids=[7, 8])  # loss 3, other tokenizer, other length
    method = ReferenceModel()
    assert method.score(target, AuxiliaryRecords(reference=reference)) == pytest.approx(1.0)
    # The target finding the text harder than the reference does points away from membership.
    assert method.score(reference, AuxiliaryRecords(reference=target)) == pytest.approx(-1.0)
    with pytest.raises(MethodConfigError, match="'reference' pass"):
        method.score(target, None)


def test_reference_keys_and_parsing():
    assert ReferenceModel().reference == DEFAULT_REFERENCE
    assert ReferenceModel().key == "reference_smollm2_135m"
    parsed = parse_method("reference:reference=HuggingFaceTB/SmolLM2-360M")
    assert isinstance(parsed, ReferenceModel)
    assert parsed.reference == "HuggingFaceTB/SmolLM2-360M"
    assert parsed.key == "reference_HuggingFaceTB_SmolLM2_360M"
    assert "SmolLM2-360M" in parsed.label
    with pytest.raises(MethodConfigError, match="model spec"):
        ReferenceModel(reference="  ")


def test_neighbourhood_score_is_mean_neighbour_loss_minus_loss():
    text = records_of([-2.0, -2.0])  # loss 2
    neighbours = (records_of([-2.5]), records_of([-3.0, -4.0]), records_of([-3.0]))  # losses 2.5, 3.5, 3
    method = Neighbourhood(n_neighbours=3)
    assert method.score(text, AuxiliaryRecords(neighbours=neighbours)) == pytest.approx(1.0)
    with pytest.raises(MethodConfigError, match="expects 5 neighbours"):
        Neighbourhood().score(text, AuxiliaryRecords(neighbours=neighbours))
    with pytest.raises(MethodConfigError, match="'neighbours' pass"):
        method.score(text, AuxiliaryRecords())


def test_neighbourhood_parameters():
    assert Neighbourhood().key == "neighbourhood_n5_f0.15"
    parsed = parse_method("neighbourhood:n_neighbours=3,fraction=0.3,seed=2")
    assert parsed == Neighbourhood(n_neighbours=3, fraction=0.3, seed=2)
    assert parsed.key == "neighbourhood_n3_f0.3_s2"
    for bad in ({"n_neighbours": 0}, {"fraction": 0.0}, {"fraction": 1.5}):
        with pytest.raises(MethodConfigError):
            Neighbourhood(**bad)


def test_recall_ratio_hand_computed_over_shared_tokens():
    plain = records_of([-1.0, -2.0, -3.0, -2.0], token_ids=[5, 6, 7, 8])
    # The prefixed pass was cut after 3 tokens: LL(x|P) = -3 over them, LL(x) = -2 over the same three.
    prefixed = records_of([-2.0, -3.0, -4.0], token_ids=[5, 6, 7])
    assert Recall().score(plain, AuxiliaryRecords(prefixed=prefixed)) == pytest.approx(1.5)
    with pytest.raises(MethodConfigError, match="same tokens"):
        Recall().score(plain, AuxiliaryRecords(prefixed=records_of([-1.0], token_ids=[9])))


def test_recall_orientation_member_scores_higher():
    # Member: likely text whose likelihood the unseen prefix disturbs a lot. Non-member: barely disturbed.
    member = Recall().score(records_of([-1.0, -1.0]), AuxiliaryRecords(prefixed=records_of([-1.6, -1.6])))
    nonmember = Recall().score(records_of([-3.0, -3.0]), AuxiliaryRecords(prefixed=records_of([-3.1, -3.1])))
    assert member == pytest.approx(1.6)
    assert nonmember == pytest.approx(3.1 / 3.0)
    assert member > nonmember


def test_recall_keys_and_parameters():
    assert Recall().key == "recall"
    assert Recall().prefix == DEFAULT_PREFIX
    custom = parse_method("recall:prefix=Zebra crossings glow at night")
    assert custom.prefix == "Zebra crossings glow at night"
    digest = hashlib.sha256(b"Zebra crossings glow at night").hexdigest()[:8]
    assert custom.key == f"recall_{digest}"
    assert digest in custom.label
    with pytest.raises(MethodConfigError, match="non-empty prefix"):
        Recall(prefix=" ")


def test_new_families_registered_but_not_default():
    defaults = {m.family for m in default_methods()}
    for family, cls in (("reference", ReferenceModel), ("neighbourhood", Neighbourhood), ("recall", Recall)):
        assert isinstance(parse_method(family), cls)
        assert family not in defaults
        assert cls.needs
    methods = [Recall(), Neighbourhood(n_neighbours=2), ReferenceModel("x"), parse_method("loss")]
    assert needed_passes(methods) == {"prefixed", "neighbours", "reference"}
    assert auxiliary_cost(methods) == 1 + (1 + 2) + 1
    assert needed_passes(default_methods()) == frozenset()
    assert auxiliary_cost(default_methods()) == 0


# ---------- neighbour generation ----------


def test_word_slots_and_neighbours_hand_checked(tiny_lm):
    tok = tiny_lm.tokenizer
    text = "The cat sat on 41st mat."
    records = score_texts(tiny_lm, [text], kgram_max=0)[0]
    pieces = records.tokens
    ids = {p: i for i, p in enumerate(pieces)}
    assert {" cat", " sat", " on"} <= set(pieces)
    alt = np.tile(np.asarray(tok.convert_tokens_to_ids(["ĠThe"] * 4)), (records.n_tokens, 1))
    # The same token, the same word in capitals, not letters, then a usable word.
    alt[ids[" cat"]] = tok.convert_tokens_to_ids(["Ġcat", "ĠCat", "Ġ,", "Ġdog"])
    alt[ids[" sat"]] = tok.convert_tokens_to_ids(["Ġstood", "Ġran", "Ġthe", "Ġa"])
    alt[ids[" on"]] = tok.convert_tokens_to_ids(["Ġon", "on", "Ġ,", "Ġ."])  # nothing usable
    slots = word_slots(records, alt, lambda i: tok.decode([i]))
    # "The" is the first token: its alternatives must have no leading space, and "The" is the same word.
    # "st" in "41st" is glued to digits and "mat" gets " The", a fine replacement.
    assert slots == [
        WordSlot(3, 7, " cat", " dog"),
        WordSlot(7, 11, " sat", " stood"),
        WordSlot(19, 23, " mat", " The"),
    ]
    assert count_words(text) == 5  # The cat sat on mat
    # fraction 0.4 of 5 words = 2 words per neighbour, chosen among the 3 slots.
    neighbours = build_neighbours(text, slots, 4, 0.4, seed=0)
    assert len(neighbours) == 4
    assert neighbours == build_neighbours(text, slots, 4, 0.4, seed=0)
    possible = {
        "The dog stood on 41st mat.",
        "The dog sat on 41st The.",
        "The cat stood on 41st The.",
    }
    assert set(neighbours) <= possible
    assert build_neighbours(text, [], 3, 0.4, seed=0) == (text, text, text)
    seeds = {build_neighbours(text, slots, 4, 0.4, seed=s) for s in range(6)}
    assert len(seeds) > 1


def test_top_alternatives_match_single_sequence_pass(tiny_lm):
    records = score_texts(tiny_lm, PASSAGES, kgram_max=0)
    batched = top_alternatives(tiny_lm, records, k=5)
    for r, top in zip(records, batched):
        ids = torch.tensor([[tiny_lm.start_token_id, *r.token_ids.tolist()]])
        with torch.inference_mode():
            logits = tiny_lm.model(input_ids=ids).logits[0, :-1].float()
        assert top.shape == (r.n_tokens, 5)
        np.testing.assert_array_equal(top[:, 0], logits.argmax(-1).numpy())
        # Each position's ids come best first under the independent pass.
        chosen = logits.gather(1, torch.from_numpy(top)).numpy()
        assert (np.diff(chosen, axis=1) <= 1e-4).all()
        # Sanity of alignment: the top-1 prediction's log-prob bounds the actual token's.
        lp = torch.log_softmax(logits, -1)
        assert (lp.gather(1, torch.from_numpy(top[:, :1]))[:, 0].numpy() >= r.logprobs - 1e-4).all()


def test_generate_neighbours_deterministic_and_batch_independent(tiny_lm):
    records = score_texts(tiny_lm, PASSAGES, kgram_max=0)
    together = generate_neighbours(tiny_lm, records, n_neighbours=3, fraction=0.2, seed=0)
    alone = generate_neighbours(tiny_lm, records[2:], n_neighbours=3, fraction=0.2, seed=0)
    assert together[2] == alone[0]
    assert together == generate_neighbours(tiny_lm, records, n_neighbours=3, fraction=0.2, seed=0)
    assert together != generate_neighbours(tiny_lm, records, n_neighbours=3, fraction=0.2, seed=1)
    for text, group in zip(PASSAGES, together):
        assert len(group) == 3
        expected_changes = max(1, round(0.2 * count_words(text)))
        for neighbour in group:
            before, after = text.split(" "), neighbour.split(" ")
            # Whole-word swaps keep the word count; the changed words are exactly the replaced ones.
            assert len(after) == len(before)
            changed = sum(a != b for a, b in zip(before, after))
            assert 1 <= changed <= expected_changes


# ---------- auxiliary passes end to end on the tiny model ----------


@pytest.fixture(scope="module")
def other_lm(tiny_lm):
    """A second random model (different seed) standing in as a reference model."""
    model = tiny_random_model(tiny_lm.tokenizer, seed=1)
    return wrap_model(model, tiny_lm.tokenizer, spec="tiny-random-seed1", start_token_id=tiny_lm.start_token_id)


def test_no_auxiliary_needed_runs_no_pass(tiny_lm):
    records = score_texts(tiny_lm, PASSAGES[:2], kgram_max=0)
    calls: list[tuple[int, int]] = []
    aux = compute_auxiliary(
        tiny_lm, PASSAGES[:2], default_methods(), records, progress=lambda d, t: calls.append((d, t))
    )
    assert aux == [AuxiliaryRecords(), AuxiliaryRecords()]
    assert calls == []


def test_compute_auxiliary_matches_independent_passes(tiny_lm, other_lm):
    records = score_texts(tiny_lm, PASSAGES, kgram_max=0)
    methods = [
        parse_method("loss"),
        ReferenceModel(reference="tiny-random-seed1"),
        Neighbourhood(n_neighbours=2, fraction=0.2),
        Recall(),
    ]
    calls: list[tuple[int, int]] = []
    aux = compute_auxiliary(
        tiny_lm, PASSAGES, methods, records, reference_lm=other_lm, progress=lambda d, t: calls.append((d, t))
    )
    assert calls[-1] == (3 * auxiliary_cost(methods), 3 * auxiliary_cost(methods))
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)

    reference = score_texts(other_lm, PASSAGES, kgram_max=0)
    prefixed = score_texts(tiny_lm, PASSAGES, kgram_max=0, prefix=DEFAULT_PREFIX)
    neighbour_texts = generate_neighbours(tiny_lm, records, n_neighbours=2, fraction=0.2, seed=0)
    for i, (r, a) in enumerate(zip(records, aux)):
        scores = score_all(methods, r, a)
        assert scores["reference_tiny_random_seed1"] == pytest.approx(reference[i].loss - r.loss, abs=1e-6)
        assert scores["recall"] == pytest.approx(prefixed[i].logprobs.mean() / r.logprobs.mean(), abs=1e-6)
        assert [n.text for n in a.neighbours] == list(neighbour_texts[i])
        independent = score_texts(tiny_lm, list(neighbour_texts[i]), kgram_max=0)
        expected = np.mean([n.loss for n in independent]) - r.loss
        assert scores["neighbourhood_n2_f0.2"] == pytest.approx(expected, abs=1e-5)
        assert a.neighbours[0].text != PASSAGES[i]


def test_truncated_passages_compare_the_same_span(tiny_lm, other_lm):
    with pytest.warns(TruncationWarning):
        records = score_texts(tiny_lm, PASSAGES[:2], kgram_max=0, max_tokens=6)
    assert all(r.n_tokens == 6 and r.n_dropped > 0 for r in records)
    methods = [ReferenceModel(reference="tiny-random-seed1"), Recall(), Neighbourhood(n_neighbours=1)]
    with pytest.warns(TruncationWarning):  # the prefixed pass reads whole passages and cuts them the same way
        aux = compute_auxiliary(tiny_lm, PASSAGES[:2], methods, records, reference_lm=other_lm)
    for r, a in zip(records, aux):
        span = scored_text(r)
        assert a.reference.text == span
        assert len(a.neighbours[0].text.split(" ")) == len(span.split(" "))
        np.testing.assert_array_equal(a.prefixed.token_ids[:6], r.token_ids)
        assert np.isfinite(score_all(methods, r, a)["recall"])


def test_auxiliary_configuration_errors(tiny_lm, other_lm):
    records = score_texts(tiny_lm, PASSAGES[:1], kgram_max=0)
    with pytest.raises(MethodConfigError, match="must differ from the target"):
        compute_auxiliary(tiny_lm, PASSAGES[:1], [ReferenceModel(reference="tiny-random")], records)
    with pytest.raises(MethodConfigError, match="asks for 'other'"):
        compute_auxiliary(tiny_lm, PASSAGES[:1], [ReferenceModel(reference="other")], records, reference_lm=other_lm)
    with pytest.raises(MethodConfigError, match="one ReCaLL prefix"):
        compute_auxiliary(tiny_lm, PASSAGES[:1], [Recall(), Recall(prefix="Another text")], records)
    with pytest.raises(MethodConfigError, match="one neighbour configuration"):
        compute_auxiliary(tiny_lm, PASSAGES[:1], [Neighbourhood(), Neighbourhood(seed=1)], records)
    with pytest.raises(MethodConfigError, match="2 texts but 1"):
        compute_auxiliary(tiny_lm, PASSAGES[:2], [Recall()], records)


@pytest.mark.slow
def test_real_model_ranks_a_famous_passage_above_fresh_ones(smollm2):
    """SmolLM2 surely saw the Gettysburg Address; the two other paragraphs were written for this test."""
    texts = [
        "Four score and seven years ago our fathers brought forth on this continent, a new nation, conceived in "
        "Liberty, and dedicated to the proposition that all men are created equal. Now we are engaged in a great "
        "civil war, testing whether that nation, or any nation so conceived and so dedicated, can long endure.",
        "My neighbour keeps three tortoises in a converted greenhouse and names each one after a retired cricket "
        "umpire; the smallest escapes every April and is usually found asleep under the rhubarb by the shed.",
        "Our choir's minibus broke down twice on the way to the regional final, so we rehearsed the harmonies in a "
        "motorway service station while a mechanic replaced a belt that had been squealing for a month.",
    ]
    methods = [Neighbourhood(), Recall()]
    records = score_texts(smollm2, texts, kgram_max=0)
    aux = compute_auxiliary(smollm2, texts, methods, records)
    scores = [score_all(methods, r, a) for r, a in zip(records, aux)]
    key = "neighbourhood_n5_f0.15"
    assert scores[0][key] > max(scores[1][key], scores[2][key]) + 0.3, scores
    # The unseen prefix moves every passage's likelihood (a 135M model's ReCaLL ordering is not reliable).
    assert all(np.isfinite(s["recall"]) and abs(s["recall"] - 1) > 1e-3 for s in scores), scores
    # Neighbours of real text stay real text: same number of words, a few of them changed.
    for text, a in zip(texts, aux):
        for neighbour in a.neighbours:
            before, after = text.split(" "), neighbour.text.split(" ")
            assert len(after) == len(before)
            assert 1 <= sum(x != y for x, y in zip(before, after)) <= 0.2 * len(before)


def test_a_detector_with_a_pass_of_its_own_needs_nothing_else_changed(tiny_lm):
    """The worked example of docs/contributing.md: one class brings its pass; compute_auxiliary runs it once
    for every method that reads it, batched, and counts it in the progress total."""
    from dataclasses import dataclass
    from typing import Any

    from core.engine.records import scored_text
    from core.methods.base import Method, PassContext, PassStep

    calls: list[int] = []

    @dataclass(frozen=True)
    class ReversedLoss(Method):
        family = "reversed_loss"
        title = "Reversed loss"
        description = "Loss of the words in reverse order minus the passage's loss."
        needs = frozenset({"reversed"})
        provides = "reversed"
        pass_title = "reversed pass"

        def pass_cost(self) -> int:
            return 1

        def compute_pass(self, context: PassContext, step: PassStep) -> list[Any]:
            texts = [" ".join(reversed(scored_text(r).split())) for r in context.records]
            calls.append(len(texts))
            return list(score_texts(context.lm, texts, kgram_max=0, progress=step(len(texts))))

        def score(self, records: TokenRecords, aux: AuxiliaryRecords | None = None) -> float:
            return self._require_aux(aux, "reversed").loss - records.loss

    texts = ["the cat sat on the mat today", "a quick brown fox jumps over dogs"]
    records = score_texts(tiny_lm, texts, kgram_max=0)
    seen: list[tuple[int, int]] = []
    methods = [ReversedLoss(), ReversedLoss()]
    assert auxiliary_cost(methods) == 1
    aux = compute_auxiliary(tiny_lm, texts, methods, records, progress=lambda done, total: seen.append((done, total)))
    assert calls == [2]  # one batched pass, however many methods read it
    assert seen[-1] == (2, 2)
    by_hand = score_texts(tiny_lm, ["today mat the on sat cat the", "dogs over jumps fox brown quick a"], kgram_max=0)
    for a, r, expected in zip(aux, records, by_hand, strict=True):
        assert ReversedLoss().score(r, a) == pytest.approx(expected.loss - r.loss)
