"""Every answer a served model gives is checked before use: each fault of the served-model round (values no
model can produce, wrong types, counts that do not match what was sent) is one line naming the answer."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pytest

from core.engine import served_answers as answers
from core.engine.served_answers import ServedAnswerError

WHERE = "http://127.0.0.1:8000/v1"
PROMPT = [0, 11, 12]


def _entries(value: Any) -> dict[str, Any]:
    """A choice whose prompt log-probs give ``value`` for token 11 (token 12 is fine)."""
    return {"prompt_logprobs": [None, {"11": value}, {"12": {"logprob": -1.0, "rank": 1}}]}


def _read(choice: dict[str, Any]) -> list[tuple[float, int]]:
    entries = answers.prompt_entries(choice, PROMPT, WHERE)
    assert entries is not None
    return [answers.token_logprob(e, t, i + 2, WHERE) for i, (t, e) in enumerate(zip(PROMPT[1:], entries[1:]))]


@dataclass(frozen=True)
class Bad:
    name: str
    choice: dict[str, Any]
    expected: str


BAD_LOGPROBS = [
    Bad("a log-prob above 0", _entries({"logprob": 3.5, "rank": 1}), "the log-prob +3.5 for token 11 at position 2"),
    Bad("a rank of -3", _entries({"logprob": -0.5, "rank": -3}), "the rank -3 for token 11 at position 2"),
    Bad("a NaN log-prob", _entries({"logprob": math.nan, "rank": 1}), "the log-prob NaN for token 11"),
    Bad("a -inf log-prob", _entries({"logprob": -math.inf, "rank": 9}), "the log-prob -inf (probability zero)"),
    Bad("a null log-prob", _entries({"logprob": None, "rank": 1}), "the log-prob None for token 11"),
    Bad("a string log-prob", _entries({"logprob": "-0.5", "rank": 1}), "the log-prob '-0.5' for token 11"),
    Bad("a missing log-prob key", _entries({"rank": 1}), "the log-prob None for token 11"),
    Bad("a bare float entry", _entries(-0.5), "-0.5 for token 11 at position 2 instead of an object"),
    Bad(
        "the wrong token id",
        {"prompt_logprobs": [None, {"99": {"logprob": -1.0}}, {"12": {"logprob": -1.0}}]},
        "no log-prob for token 11 at position 2, the token it was sent",
    ),
    Bad(
        "a short list",
        {"prompt_logprobs": [None, {"11": {"logprob": -1.0}}]},
        "2 prompt log-prob entries for a prompt of 3 tokens",
    ),
    Bad("entries as an object", {"prompt_logprobs": {"11": -1.0}}, "prompt_logprobs as {'11': -1.0} instead of a list"),
    Bad(
        "an entry that is a list",
        {"prompt_logprobs": [None, [1, 2], {"12": {"logprob": -1.0}}]},
        "a prompt log-prob entry [1, 2] at token 2 instead of an object",
    ),
]


@pytest.mark.parametrize("case", BAD_LOGPROBS, ids=[c.name for c in BAD_LOGPROBS])
def test_a_bad_log_prob_answer_is_one_line_naming_it(case: Bad):
    with pytest.raises(ServedAnswerError) as info:
        _read(case.choice)
    message = str(info.value)
    assert message.startswith(f"The server at {WHERE} answered ") and case.expected in message, message
    assert "\n" not in message


def test_good_answers_are_read_and_rounding_above_zero_is_a_certain_token():
    assert _read(_entries({"logprob": -0.25, "rank": 3})) == [(-0.25, 3), (-1.0, 1)]
    assert _read(_entries({"logprob": 4e-5, "rank": 1}))[0] == (0.0, 1)
    assert _read(_entries({"logprob": -2.0}))[0] == (-2.0, 0)  # no rank given: unknown, not a fault
    assert answers.prompt_entries({}, PROMPT, WHERE) is None  # no log-probs at all: a capability the caller names


@pytest.mark.parametrize(
    ("data", "n", "expected"),
    [
        ({"choices": {"0": {}}}, 1, "'choices' as {'0': {}} instead of a list"),
        ({"choices": None}, 1, "'choices' as None instead of a list"),
        ({"choices": [{}, {}]}, 3, "2 choices for 3 prompts"),
        ({"choices": [1.5]}, 1, "'choices' holding something other than objects"),
        ({"choices": [{"index": 0}, {"index": 0}]}, 2, "choice indexes [0, 0] instead of 0 to 1"),
    ],
)
def test_choices_must_be_one_object_per_prompt(data, n, expected):
    with pytest.raises(ServedAnswerError, match=None) as info:
        answers.choices_of(data, n, WHERE)
    assert expected in str(info.value)


def test_choices_come_back_in_the_prompts_order():
    data = {"choices": [{"index": 1, "text": "b"}, {"index": 0, "text": "a"}]}
    assert [c["text"] for c in answers.choices_of(data, 2, WHERE)] == ["a", "b"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [("big", "max_model_len 'big' for the model"), (0, "max_model_len 0"), (True, "max_model_len True")],
)
def test_a_context_length_that_is_no_token_count_is_one_line(value, expected):
    with pytest.raises(ServedAnswerError) as info:
        answers.context_length(value, WHERE, 2048)
    assert expected in str(info.value)
    assert answers.context_length(None, WHERE, 2048) == 2048
    assert answers.context_length(4096, WHERE, 2048) == 4096


@pytest.mark.parametrize("value", [None, "1 2 3", [1, -2], [1, 2.5], [True]])
def test_token_ids_must_be_a_list_of_non_negative_integers(value):
    with pytest.raises(ServedAnswerError, match="instead of a list of token ids"):
        answers.token_ids(value, "/tokenize's tokens", WHERE)
    assert answers.token_ids([0, 5, 7], "ids", WHERE) == [0, 5, 7]


def test_ranked_tokens_need_real_ranks():
    assert answers.ranked_tokens({"5": {"rank": 2}, "9": {"rank": 1}}, 2, WHERE) == [(1, 9), (2, 5)]
    with pytest.raises(ServedAnswerError, match="the rank 0 for token 5"):
        answers.ranked_tokens({"5": {"rank": 0}}, 2, WHERE)
    with pytest.raises(ServedAnswerError, match="the token id 'x'"):
        answers.ranked_tokens({"x": {"rank": 1}}, 2, WHERE)
