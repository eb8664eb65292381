"""The bundled instruct model asked in a chat turn in this process: greedy answers equal transformers' own
greedy decoding of the same chat template, sampled answers repeat under their seed, and the answer log-probs
are the raw distribution's, best first, with the greedy token on top."""

from __future__ import annotations

import torch

from core.engine.chat import ChatRequest
from core.engine.local_chat import LocalChat, chat_prompt_ids

QUESTION = ChatRequest(messages=(("user", "Name three colours of the rainbow."),), max_tokens=24)


def test_a_greedy_answer_equals_transformers_greedy_decoding(smollm2):
    ((answer,),) = LocalChat(smollm2).chat([QUESTION])
    prompt = chat_prompt_ids(smollm2, QUESTION)
    rendered = smollm2.tokenizer.apply_chat_template(QUESTION.as_messages(), add_generation_prompt=True, tokenize=False)
    assert smollm2.tokenizer.decode(prompt) == rendered
    with torch.inference_mode():
        out = smollm2.model.generate(
            torch.tensor([prompt]),
            attention_mask=torch.ones(1, len(prompt), dtype=torch.long),
            max_new_tokens=QUESTION.max_tokens,
            do_sample=False,
            pad_token_id=smollm2.tokenizer.eos_token_id,
        )
    expected = smollm2.tokenizer.decode(out[0, len(prompt) :], skip_special_tokens=True)
    assert answer.text == expected and answer.text.strip()
    assert answer.finish in ("stop", "length")


def test_sampled_answers_repeat_under_their_seed_and_differ_between_samples(smollm2):
    sampled = ChatRequest(messages=QUESTION.messages, max_tokens=12, temperature=1.0, samples=3, seed=7)
    first = LocalChat(smollm2).chat([sampled])[0]
    again = LocalChat(smollm2).chat([sampled])[0]
    assert [a.text for a in first] == [a.text for a in again]
    assert len({a.text for a in first}) > 1


def test_answer_log_probs_are_best_first_with_the_greedy_token_on_top(smollm2):
    asked = ChatRequest(messages=QUESTION.messages, max_tokens=6, top_logprobs=5)
    ((answer,),) = LocalChat(smollm2).chat([asked])
    assert answer.logprobs is not None and len(answer.logprobs) >= 1
    for position in answer.logprobs:
        values = [v for _, v in position]
        assert len(values) == 5 and values == sorted(values, reverse=True) and values[0] <= 0
    tops = [position[0][0] for position in answer.logprobs]
    answered = tops if answer.finish == "length" else tops[:-1]  # the last is the end-of-turn token
    assert "".join(answered) == answer.text  # greedy: each answer token is its position's best
