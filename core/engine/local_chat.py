"""A chat request answered by a model in this process, through the chat template its tokenizer ships.

The prompt is the template's rendering with the assistant turn opened, as vLLM and hosted servers render it;
decoding stops at the template's end-of-turn token or at ``max_tokens``. Greedy at temperature 0 (argmax of
float32 logits, as a server's greedy decoding); sampled otherwise, from a generator seeded by the request's
seed, over the full distribution at that temperature (no top-k or top-p cut, as the APIs' defaults). The
answer's log-probs are those of the raw logits, before temperature, as the APIs report them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from core.engine.capabilities import ANSWER_LOGPROBS, CHAT_TEXT
from core.engine.chat import ChatAnswer, ChatRequest
from core.engine.models import LoadedModel
from core.engine.progress import ProgressCallback
from core.errors import ModelLoadError


def chat_prompt_ids(lm: LoadedModel, request: ChatRequest) -> list[int]:
    """The token ids of the conversation rendered by the model's chat template, the assistant turn opened."""
    tokenizer = lm.tokenizer
    if not getattr(tokenizer, "chat_template", None):
        raise ModelLoadError(
            f"{lm.spec} has no chat template, so it cannot be asked in conversation turns; use an instruct model."
        )
    rendered = tokenizer.apply_chat_template(request.as_messages(), add_generation_prompt=True, tokenize=False)
    return list(tokenizer(rendered, add_special_tokens=False)["input_ids"])


def _stop_ids(lm: LoadedModel) -> set[int]:
    """The ids that end an assistant turn: the tokenizer's end token and the generation config's."""
    ids = {int(lm.tokenizer.eos_token_id)} if lm.tokenizer.eos_token_id is not None else set()
    if not ids:
        ids.add(int(lm.pad_token_id))
    configured = getattr(getattr(lm.model, "generation_config", None), "eos_token_id", None)
    if isinstance(configured, int):
        ids.add(configured)
    elif isinstance(configured, list):
        ids.update(int(i) for i in configured)
    return ids


def answer_locally(lm: LoadedModel, request: ChatRequest) -> list[ChatAnswer]:
    """``request.samples`` answers, decoded together token by token with the KV cache (one row per sample)."""
    prompt = chat_prompt_ids(lm, request)
    return _decode(lm, prompt, request, _stop_ids(lm))


@torch.inference_mode()
def _decode(lm: LoadedModel, prompt: list[int], request: ChatRequest, stops: set[int]) -> list[ChatAnswer]:
    rows = request.samples
    generator = torch.Generator(device="cpu").manual_seed(request.seed)
    ids = torch.tensor([prompt] * rows, device=lm.device)
    past = None
    produced: list[list[int]] = [[] for _ in range(rows)]
    alternatives: list[list[tuple[tuple[str, float], ...]]] = [[] for _ in range(rows)]
    finish = ["length"] * rows
    stop_tensor = torch.tensor(sorted(stops), dtype=torch.long)
    for _ in range(request.max_tokens):
        out = lm.model(input_ids=ids, past_key_values=past, use_cache=True)
        past = out.past_key_values
        logits = out.logits[:, -1].float().cpu()
        if request.temperature > 0:
            probs = torch.softmax(logits / request.temperature, dim=-1)
            tokens = torch.multinomial(probs, 1, generator=generator)[:, 0]
        else:
            tokens = torch.argmax(logits, dim=-1)
        if request.top_logprobs:
            top = torch.topk(torch.log_softmax(logits, dim=-1), request.top_logprobs)
        for row in range(rows):
            if finish[row] == "stop":
                continue
            if request.top_logprobs:
                pairs = zip(top.values[row].tolist(), top.indices[row].tolist())
                alternatives[row].append(tuple((str(lm.tokenizer.decode([int(i)])), float(v)) for v, i in pairs))
            token = int(tokens[row])
            if token in stops:
                finish[row] = "stop"
            else:
                produced[row].append(token)
        if all(f == "stop" for f in finish):
            break
        # a finished row keeps being fed its end token (its answer is already complete and nothing is read)
        tokens = torch.where(torch.tensor([f == "stop" for f in finish]), stop_tensor[0], tokens)
        ids = tokens[:, None].to(lm.device)
    return [
        ChatAnswer(
            text=str(lm.tokenizer.decode(produced[row], skip_special_tokens=True)),
            finish=finish[row],
            logprobs=tuple(alternatives[row]) if request.top_logprobs else None,
        )
        for row in range(rows)
    ]


@dataclass(eq=False)
class LocalChat:
    """A model in this process asked through its tokenizer's chat template, as a server would ask it.

    Greedy (temperature 0) answers equal a server's greedy answers for the same weights; sampled answers are
    drawn from a generator seeded by the request's seed, so a rerun draws the same ones."""

    lm: LoadedModel
    capabilities: frozenset[str] = field(default=frozenset({CHAT_TEXT, ANSWER_LOGPROBS}))

    @property
    def spec(self) -> str:
        return self.lm.spec

    def chat(self, requests: Sequence[ChatRequest], progress: ProgressCallback | None = None) -> list[list[ChatAnswer]]:
        answers = []
        for done, request in enumerate(requests, start=1):
            answers.append(answer_locally(self.lm, request))
            if progress is not None:
                progress(done, len(requests))
        return answers
