"""The extraction test against freshly written passages, and one finding from it and the placement:
hand-computed chances, levels, the Bonferroni allowance and which evidence carries the verdict."""

from __future__ import annotations

import numpy as np

from core.engine.records import TokenRecords
from core.methods.extraction import MAX_CONTINUATION, Continuation
from core.passage.calibration import FreshCalibration
from core.passage.extraction import ExtractionView
from core.passage.extraction_finding import ExtractionReading, extraction_finding, read_extraction
from core.passage.verdict import NO_FRESH_CONTINUATIONS, judge_passage


def _calibration(n_tokens: list[int], loss: list[float], leading: list[float]) -> FreshCalibration:
    ids = tuple(f"f{i}" for i in range(len(n_tokens)))
    scores = {"loss": tuple(loss), "extraction": tuple(leading)}
    return FreshCalibration("m", "run", ids, tuple(n_tokens), scores, {"loss": "Loss"})


def _continuation(leading: int, length: int, prefix: int = 100) -> Continuation:
    truth = tuple(range(length))
    generated = truth[:leading] + tuple(-1 for _ in range(length - leading))
    return Continuation(0.5, prefix, truth, generated)


def _records(n: int) -> TokenRecords:
    """``n`` one-word tokens of English prose (only the count and the text's kind are read)."""
    text = " ".join(["word"] * n)
    zeros = np.zeros(n)
    offsets = np.array([[5 * i, 5 * i + 4] for i in range(n)])
    return TokenRecords(text, np.arange(n), offsets, zeros, zeros, zeros, zeros, np.ones(n), None)


def _view(prompt_words: int = 28, leading_words: int = 41) -> ExtractionView:
    return ExtractionView("p", (), (), (), prompt_words, leading_words)


def test_the_chance_counts_comparable_fresh_passages_continued_as_far_cut_at_the_passages_length():
    # Fresh passages of 200 tokens continue 64 tokens; of 20 tokens only 10: those cannot stand for a 30-token one.
    calibration = _calibration([200, 200, 200, 200, 20], [0.0] * 5, [0, 3, 40, 64, 10])
    reading = read_extraction(_continuation(30, 30), calibration)
    assert reading is not None
    assert reading.fresh_leading == (0, 3, 30, 30)  # the 20-token passage left out, 40 and 64 cut at 30
    assert reading.n_at_least == 2
    assert reading.chance == 3 / 5
    assert read_extraction(_continuation(31, MAX_CONTINUATION), calibration).n_compared == 4


def test_levels_follow_the_exact_chance_and_allow_for_a_second_test():
    fresh = tuple([0] * 150 + [2] * 40 + [5] * 9)  # 199 fresh passages
    above_all = ExtractionReading(40, 64, fresh)
    assert above_all.chance == 1 / 200
    assert above_all.level == "strong"
    assert ExtractionReading(40, 64, fresh, tests=2).level == "strong"  # 2/200 = 1%
    assert ExtractionReading(5, 64, fresh).chance == 10 / 200
    assert ExtractionReading(5, 64, fresh).level == "moderate"
    assert ExtractionReading(5, 64, fresh, tests=2).level == "weak"  # 10%
    assert ExtractionReading(2, 64, fresh).level == "none"


def test_a_word_or_two_verbatim_is_never_a_sign_however_rarely_fresh_text_gets_that_far():
    """Measured with SmolLM2: a held-out fresh passage continued 3 tokens ("the next 1 word exactly") where 21
    of 496 fresh passages got as far: a chance of 4.4% (8.8% doubled), which alone would read `weak`."""
    fresh = tuple([0] * 475 + [3] * 21)
    three = ExtractionReading(3, 64, fresh, tests=2)
    assert three.chance * 2 < 0.10
    assert three.level == "none"
    assert extraction_finding(three, _view(88, 1)).level == "inconclusive"  # further than most, not a sign
    four = ExtractionReading(4, 64, fresh, tests=2)
    assert four.level == "strong"  # at MIN_CONTINUATION tokens the chance rules again: 2/497 < 1%


def test_the_sentence_says_what_the_model_wrote_and_how_far_new_text_goes():
    fresh = tuple([0] * 150 + [3] * 49)
    finding = extraction_finding(ExtractionReading(52, 64, fresh), _view(28, 41))
    assert finding.level == "strong"
    assert finding.headline == (
        "Given the first 28 words, the model wrote the next 41 words exactly (52 of 64 tokens); no freshly "
        "written passage was continued beyond 3 tokens: a strong sign the model has seen it."
    )
    whole = extraction_finding(ExtractionReading(64, 64, fresh), _view(28, 50))
    assert "the model wrote the rest word for word (50 words, 64 tokens)" in whole.headline
    none = extraction_finding(ExtractionReading(0, 64, fresh), _view(28, 0))
    assert none.level == "none"
    assert none.headline.endswith("150 of 199 freshly written passages were not continued word for word either.")
    assert none.headline.startswith("Not continued word for word: given the first 28 words, the model's continuation")
    middle = extraction_finding(ExtractionReading(3, 64, tuple([0] * 30 + [3] * 6)), _view(28, 2))
    assert middle.level == "inconclusive"  # chance 7/37: above most new text, not far enough
    assert middle.headline.startswith("Cannot tell from the continuation: given the first 28 words")


def test_a_verbatim_continuation_carries_a_passage_the_placement_calls_ordinary():
    n = 199
    calibration = _calibration([100] * n, [float(-i) for i in range(n)], [0.0] * n)
    # Loss in the middle of the fresh passages: placement says none; the continuation is verbatim.
    verdict = judge_passage({"loss": -100.0}, _records(100), calibration, _continuation(50, 50), _view())
    placement, reading, finding = verdict.placement, verdict.reading, verdict.finding
    assert placement.level == "none"
    assert reading is not None
    assert reading.tests == 2
    assert placement.methods[0].tests == 2
    assert finding.level == "strong"  # 2 × 1/200 = 1%
    assert finding.headline.startswith("Given the first 28 words")
    assert "This reading rests on the extraction test." in finding.caveats
    assert any(e.startswith("the other test: No clear sign") for e in finding.evidence)


def test_no_sign_needs_both_tests_inside_new_texts_range():
    n = 199
    leading = [0.0] * 159 + [4.0] * 40  # 41 in 200 reach 4 tokens: under a quarter
    calibration = _calibration([100] * n, [float(-i) for i in range(n)], leading)
    ordinary = judge_passage({"loss": -100.0}, _records(100), calibration, _continuation(0, 50), _view(28, 0))
    assert ordinary.finding.level == "none"
    assert "This reading rests on the placement among fresh passages." in ordinary.finding.caveats
    # A continuation further than three quarters of new text: placement's none becomes inconclusive.
    unsure = judge_passage({"loss": -100.0}, _records(100), calibration, _continuation(4, 50), _view(28, 3))
    assert unsure.finding.level == "inconclusive"
    assert unsure.finding.headline.startswith("Cannot tell from the continuation")


def test_without_extraction_scores_the_finding_is_the_placements_alone():
    calibration = FreshCalibration("m", "run", ("a",) * 1, (100,), {"loss": (0.0,)}, {"loss": "Loss"})
    verdict = judge_passage({"loss": -1.0}, _records(100), calibration, _continuation(5, 50), _view())
    assert verdict.reading is None
    assert verdict.placement.methods[0].tests == 1
    assert verdict.finding.level == "inconclusive"  # one fresh passage is no yardstick
    assert NO_FRESH_CONTINUATIONS in verdict.finding.caveats


def test_the_numbers_say_1_in_n_only_while_that_is_at_most_half():
    """Every fresh passage continued at least as far: "200 of 200 ... as far", never "(1 in 1)"."""
    fresh = tuple([0] * 199)
    common = extraction_finding(ExtractionReading(0, 64, fresh), _view(28, 0))
    assert "199 of 199 fresh passages continued as far" in common.numbers
    assert "(1 in 1)" not in common.numbers
    rare = extraction_finding(ExtractionReading(40, 64, fresh), _view())
    assert "0 of 199 fresh passages continued as far (1 in 200)" in rare.numbers
