"""The bundled instruct model served by the real vLLM behind a front that answers only what a hosted chat API
answers: connecting finds a chat source (with answer log-probs, or text alone where the front refuses them),
asks nothing a hosted API refuses, and its greedy answers and n-gram coverage at temperature 0 equal the
same model's in this process."""

from __future__ import annotations

import os

import numpy as np
import pytest

from core.chat.coverage import coverage_request, score_answers, split_passage
from core.engine.capabilities import ANSWER_LOGPROBS, CHAT_TEXT
from core.engine.chat import ChatRequest
from core.engine.local_chat import LocalChat
from core.engine.served import Endpoint
from core.engine.served_chat import connect_chat
from tests.helpers.chat_front import chat_front
from tests.helpers.tolerance import SERVED
from tests.helpers.vllm_server import API_KEY, KEY_VAR, SERVED_NAME

GETTYSBURG = (
    "Four score and seven years ago our fathers brought forth on this continent, a new nation, conceived in "
    "Liberty, and dedicated to the proposition that all men are created equal."
)
ASKED = [
    ChatRequest(messages=(("user", "Name three colours of the rainbow."),), max_tokens=20, top_logprobs=5),
    ChatRequest(messages=(("user", "What is the capital of France? One word."),), max_tokens=8, top_logprobs=5),
]


@pytest.fixture()
def key():
    os.environ[KEY_VAR] = API_KEY
    return KEY_VAR


def test_a_hosted_style_front_is_a_chat_source_with_answer_log_probs_and_is_asked_nothing_it_refuses(
    vllm_endpoint, key
):
    with chat_front(vllm_endpoint.removesuffix("/v1")) as (url, asked):
        chat = connect_chat(Endpoint(url, api_key_env=key))
        assert chat.name == SERVED_NAME
        assert chat.capabilities == {CHAT_TEXT, ANSWER_LOGPROBS}
        assert chat.spec == f"chat:{SERVED_NAME}@{url}"
        chat.chat(ASKED[:1])
    assert set(asked) <= {"GET /v1/models", "POST /v1/chat/completions"}


def test_a_front_without_log_probs_is_a_chat_source_with_text_alone(vllm_endpoint, key):
    with chat_front(vllm_endpoint.removesuffix("/v1"), logprobs=False) as (url, _):
        chat = connect_chat(Endpoint(url, api_key_env=key))
        assert chat.capabilities == {CHAT_TEXT}
        ((answer,),) = chat.chat([ChatRequest(messages=ASKED[0].messages, max_tokens=8)])
        assert answer.text.strip() and answer.logprobs is None


def test_greedy_answers_and_their_log_probs_equal_the_model_in_this_process(vllm_endpoint, key, smollm2):
    with chat_front(vllm_endpoint.removesuffix("/v1")) as (url, _):
        served = connect_chat(Endpoint(url, api_key_env=key, concurrency=2)).chat(ASKED)
    local = LocalChat(smollm2).chat(ASKED)
    for (s,), (here,) in zip(served, local, strict=True):
        assert s.text == here.text and s.finish == here.finish
        assert s.logprobs is not None and here.logprobs is not None
        for a, b in zip(s.logprobs, here.logprobs):  # the answer's tokens: best alternative and its log-prob
            assert a[0][0] == b[0][0]
            assert abs(a[0][1] - b[0][1]) <= SERVED


def test_n_gram_coverage_at_temperature_zero_equals_the_in_process_greedy_continuation(vllm_endpoint, key, smollm2):
    split = split_passage(GETTYSBURG)
    request = coverage_request(split, samples=1, temperature=0.0)
    with chat_front(vllm_endpoint.removesuffix("/v1")) as (url, _):
        (served,) = connect_chat(Endpoint(url, api_key_env=key)).chat([request])
    (local,) = LocalChat(smollm2).chat([request])
    assert [a.text for a in served] == [a.text for a in local]
    a, b = score_answers(split, served), score_answers(split, local)
    assert a.score is not None and np.isclose(a.score, b.score)
