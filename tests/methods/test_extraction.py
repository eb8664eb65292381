"""The extraction test: hand-made continuations, the prompt/continuation plan, and the batched path against
one slow greedy decode per passage."""

from __future__ import annotations

import pytest

from core.engine.scoring import score_texts
from core.errors import InputTextError
from core.methods.extraction import (
    MAX_CONTINUATION,
    MIN_CONTINUATION,
    MIN_PREFIX_TOKENS,
    Continuation,
    extract,
    extraction_plan,
    leading_matches,
    longest_matching_run,
)
from core.passage.extraction import extraction_view
from tests.helpers.generation import greedy_generate_slow


def test_a_continuation_equal_to_the_truth_matches_everywhere():
    e = Continuation(0.5, 10, truth_ids=(5, 6, 7, 8), generated_ids=(5, 6, 7, 8))
    assert e.leading == 4
    assert e.longest_run == 4
    assert e.matched == (True, True, True, True)


def test_a_continuation_diverging_at_token_k_leads_by_k_and_its_longest_run_may_come_later():
    e = Continuation(0.5, 10, truth_ids=(1, 2, 3, 4, 5, 6, 7, 8), generated_ids=(1, 2, 9, 4, 5, 6, 7, 0))
    assert e.leading == 2
    assert e.longest_run == 4  # positions 3..6
    assert e.matched == (True, True, False, True, True, True, True, False)
    assert leading_matches([9, 2], [1, 2]) == 0
    assert longest_matching_run([], []) == 0


def test_the_plan_halves_the_passage_caps_the_continuation_and_skips_what_is_too_short():
    assert extraction_plan(40) == (20, 20)
    assert extraction_plan(41) == (20, 21)  # round half to even, then the rest
    assert extraction_plan(1000) == (500, MAX_CONTINUATION)
    assert extraction_plan(60, 0.25) == (15, 45)
    assert extraction_plan(MIN_PREFIX_TOKENS + MIN_CONTINUATION) == (MIN_PREFIX_TOKENS, MIN_CONTINUATION)
    assert extraction_plan(MIN_PREFIX_TOKENS + MIN_CONTINUATION - 1) is None
    assert extraction_plan(3) is None
    with pytest.raises(InputTextError, match="between 0 and 1"):
        extraction_plan(40, 1.0)


@pytest.mark.parametrize(
    "text",
    [
        "The lighthouse keeper counted the gulls every morning and wrote the number in a green ledger.",
        "東京の小さな書店では、毎朝店主が窓を拭いてから新しい本を棚に並べていた。",
        "Tabs\tand  double  spaces, then a newline\nand café, naïve, ümlaut.",
    ],
)
def test_the_batched_continuation_equals_one_slow_greedy_decode_per_passage(tiny_lm, text):
    (records,) = score_texts(tiny_lm, [text], kgram_max=0)
    ((half, quarter),) = extract(tiny_lm, [records], (0.5, 0.25))
    for extraction, fraction in ((half, 0.5), (quarter, 0.25)):
        assert extraction is not None
        prefix, length = extraction_plan(records.n_tokens, fraction)
        assert extraction.prefix_tokens == prefix
        assert extraction.truth_ids == tuple(records.token_ids[prefix : prefix + length].tolist())
        prompt = [tiny_lm.start_token_id, *records.token_ids[:prefix].tolist()]
        assert extraction.generated_ids == greedy_generate_slow(tiny_lm, prompt, length)


def test_a_passage_too_short_gets_none_and_the_rest_of_the_batch_is_measured(tiny_lm):
    texts = ["Hi there.", "A longer passage about nothing in particular, with enough tokens to split in two."]
    records = score_texts(tiny_lm, texts, kgram_max=0)
    (short,), (long,) = extract(tiny_lm, records)
    assert short is None
    assert long is not None


def test_the_view_cuts_the_passage_at_the_prompt_and_aligns_the_pieces(tiny_lm):
    text = "Rain fell on the orchard at Bellmere for nine days, and the pickers waited in the barn."
    (records,) = score_texts(tiny_lm, [text], kgram_max=0)
    ((extraction,),) = extract(tiny_lm, [records])
    assert extraction is not None
    view = extraction_view(tiny_lm, records, extraction)
    assert text.startswith(view.prompt + "".join(view.truth_pieces))
    assert len(view.truth_pieces) == extraction.length
    assert len(view.generated_pieces) == extraction.length
    assert view.prompt_words == len(view.prompt.split())


@pytest.mark.parametrize(
    "text",
    [
        "Rain fell on the orchard at Bellmere for nine days, and the pickers waited in the barn.",
        "東京の小さな書店では、毎朝店主が窓を拭いてから新しい本を棚に並べていた。",  # characters split over byte tokens
    ],
)
def test_a_model_that_writes_the_passage_word_for_word_reads_as_fully_extracted(tiny_lm, text):
    """The view of a continuation equal to the truth: every piece matched, the pieces spell the passage's rest
    exactly (a character split over two tokens included), the leading words the whole rest."""
    (records,) = score_texts(tiny_lm, [text], kgram_max=0)
    prefix, length = extraction_plan(records.n_tokens)
    truth = tuple(records.token_ids[prefix : prefix + length].tolist())
    view = extraction_view(tiny_lm, records, Continuation(0.5, prefix, truth, truth))
    assert all(view.matched)
    assert "".join(view.generated_pieces) == "".join(view.truth_pieces) == text[len(view.prompt) :]
    assert view.leading_words == len(text[len(view.prompt) :].split())


def test_the_detector_scores_the_leading_matched_tokens_through_its_own_pass(tiny_lm):
    from core.methods import parse_methods, score_all
    from core.methods.auxiliary import compute_auxiliary

    texts = ["Hi.", "Rain fell on the orchard at Bellmere for nine days, and the pickers waited in the barn."]
    records = score_texts(tiny_lm, texts, kgram_max=0)
    (method,) = parse_methods(["extraction"])
    assert method.key == "extraction"
    aux = compute_auxiliary(tiny_lm, texts, [method], records)
    scores = [score_all([method], rec, a)["extraction"] for rec, a in zip(records, aux, strict=True)]
    ((expected,),) = extract(tiny_lm, records[1:])
    assert expected is not None
    assert scores[1] == expected.leading
    assert scores[0] != scores[0]  # too short: NaN
    assert parse_methods(["extraction:fraction=0.25"])[0].key == "extraction_f0.25"
