"""N-gram coverage against hand-counted values: which words of a continuation lie in a run of n words of the
true rest, how a passage is cut, and that refusals and empty answers are counted, never scored."""

from __future__ import annotations

import pytest

from core.chat.coverage import Split, coverage, coverage_request, score_answers, split_passage, words
from core.engine.chat import CUT_OFF, EMPTY, REFUSED, ChatAnswer, answer_problem


def test_words_are_letter_runs_and_single_punctuation_marks():
    assert words("It's 9:40, Mr. Lee!") == ["It", "'", "s", "9", ":", "40", ",", "Mr", ".", "Lee", "!"]


def test_coverage_counts_the_words_inside_a_shared_run_of_n():
    truth = "the cat sat on the mat and looked out of the window"
    # "the cat sat on" (4 words) occurs in the truth; "a dog" and "ran" do not: 4 of 7 words covered.
    assert coverage("the cat sat on a dog ran", truth, n=4) == pytest.approx(4 / 7)
    # two overlapping runs ("sat on the mat", "on the mat and") cover 5 words; "then slept" does not
    assert coverage("sat on the mat and then slept", truth, n=4) == pytest.approx(5 / 7)
    assert coverage("looked out of the window", truth, n=4) == 1.0
    assert coverage("the cat sat", truth, n=4) == 0.0  # shorter than one run
    assert coverage("the cat ran on the mat", truth, n=4) == 0.0  # three-word pieces only
    assert coverage("the cat ran on the mat", truth, n=3) == pytest.approx(3 / 6)  # "on the mat"


def test_a_passage_is_cut_at_a_word_boundary_and_keeps_every_character():
    text = "One two three four five six seven eight nine ten"
    split = split_passage(text)
    assert split == Split(prompt="One two three four five", rest=" six seven eight nine ten")
    assert split.prompt + split.rest == text
    assert split_passage("a b c d", share=0.25).prompt == "a"
    with pytest.raises(ValueError, match="at least two words"):
        split_passage("alone")


def test_the_request_names_the_prompt_verbatim_and_leaves_room_for_the_rest():
    request = coverage_request(Split(prompt="Four score and", rest=" seven years ago"))
    ((role, content),) = request.messages
    assert role == "user" and content.endswith("\n\nFour score and")
    assert request.samples == 5 and request.temperature == 1.0 and request.max_tokens == 16


def test_refusals_and_empty_answers_are_counted_and_never_scored():
    split = Split(prompt="The cat", rest=" sat on the mat and looked out")
    answers = [
        ChatAnswer(" sat on the mat and slept", "stop"),
        ChatAnswer("I'm sorry, but I can't reproduce copyrighted text.", "stop"),
        ChatAnswer("   ", "stop"),
        ChatAnswer("a different story entirely here", "length"),
    ]
    scored = score_answers(split, answers)
    assert scored.problems == (None, REFUSED, EMPTY, None)
    assert scored.coverages == (pytest.approx(5 / 6), None, None, 0.0)
    assert scored.score == pytest.approx(5 / 6)
    assert score_answers(split, answers[1:3]).score is None


def test_a_cut_off_answer_is_unreadable_only_where_the_test_needs_it_whole():
    cut = ChatAnswer("The answer is", "length")
    assert answer_problem(cut) is None
    assert answer_problem(cut, whole=True) == CUT_OFF
    assert answer_problem(ChatAnswer("Sorry, I cannot help with that.", "stop")) == REFUSED
    assert answer_problem(ChatAnswer("Sorry to hear the mat was wet: the cat sat on it.", "stop")) is None
