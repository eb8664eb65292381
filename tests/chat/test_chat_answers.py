"""Every field of a chat endpoint's reply is checked before a test reads it: the number of choices, the types,
each answer log-prob a finite number at most 0; each fault is one line naming the server."""

from __future__ import annotations

import pytest

from core.engine.chat import ChatRequest
from core.engine.served_answers import ServedAnswerError
from core.engine.served_chat import chat_answers

WHERE = "http://127.0.0.1:9/v1"
ASKED = ChatRequest(messages=(("user", "Hi"),), max_tokens=4, samples=2, top_logprobs=2)


def _choice(text="Hello", finish="stop", index=0, logprobs=None):
    return {
        "index": index,
        "message": {"role": "assistant", "content": text},
        "finish_reason": finish,
        "logprobs": logprobs,
    }


def _logprobs(*values):
    return {
        "content": [
            {"token": "x", "logprob": values[0], "top_logprobs": [{"token": "x", "logprob": v} for v in values]}
        ]
    }


def test_a_well_formed_reply_gives_its_answers_in_index_order_with_their_log_probs():
    reply = {
        "choices": [
            _choice("second", index=1, logprobs=_logprobs(-0.1, -2.0)),
            _choice("first", "length", 0, _logprobs(-0.5, -1.0)),
        ]
    }
    first, second = chat_answers(reply, ASKED, WHERE)
    assert (first.text, first.finish, second.text) == ("first", "length", "second")
    assert first.logprobs == ((("x", -0.5), ("x", -1.0)),)
    assert second.logprobs == ((("x", -0.1), ("x", -2.0)),)


def test_an_answer_without_log_probs_is_kept_and_says_so():
    (answer,) = chat_answers(
        {"choices": [_choice(logprobs=None)]}, ChatRequest((("user", "Hi"),), 4, top_logprobs=2), WHERE
    )
    assert answer.logprobs is None and answer.text == "Hello"


def test_a_null_content_is_an_empty_answer_not_a_fault():
    (answer,) = chat_answers({"choices": [_choice(text=None)]}, ChatRequest((("user", "Hi"),), 4), WHERE)
    assert answer.text == ""


@pytest.mark.parametrize(
    ("reply", "said"),
    [
        ({"choices": "none"}, "'choices' that is not a list of objects"),
        ({"choices": [_choice()]}, "1 choices for the 2 answers asked for (n)"),
        ({"choices": [{"index": 0, "message": "Hello"}, _choice(index=1)]}, "a choice without a message object"),
        ({"choices": [_choice(text=["a"]), _choice(index=1)]}, "a message content of type list instead of text"),
        ({"choices": [_choice(finish=3), _choice(index=1)]}, "a finish_reason of type int"),
        ({"choices": [_choice(logprobs={"content": "x"}), _choice(index=1)]}, "'content' is not a list"),
        (
            {"choices": [_choice(logprobs=_logprobs(0.5)), _choice(index=1)]},
            "the log-prob +0.5 for the alternative 'x'",
        ),
        ({"choices": [_choice(logprobs=_logprobs("high")), _choice(index=1)]}, "which is not a number"),
    ],
)
def test_an_odd_reply_is_one_line_naming_the_server(reply, said):
    with pytest.raises(ServedAnswerError) as caught:
        chat_answers(reply, ASKED, WHERE)
    message = str(caught.value)
    assert WHERE in message and said in message and "\n" not in message
