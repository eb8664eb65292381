"""A model behind an OpenAI-style ``/chat/completions`` endpoint, as a chat source.

Only what hosted chat APIs accept is sent: messages, ``max_tokens``, ``temperature``, ``n``, ``seed`` and, when
the server gives them, ``logprobs`` with at most 20 ``top_logprobs`` of the answer's own tokens; never ``echo``,
``prompt_logprobs`` or raw completions. Connecting asks once whether answer log-probs come back: a server that
refuses them, or answers without them, is a chat source with text alone. Every answer is checked (the count
of choices, the types, every log-prob a finite number at most 0) before a test reads it. The API key is read
from the environment variable the user names and is never printed, stored or recorded.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from core.engine import served_answers as answers
from core.engine.capabilities import ANSWER_LOGPROBS, CHAT_TEXT
from core.engine.chat import ChatAnswer, ChatRequest
from core.engine.progress import ProgressCallback
from core.engine.served import (
    Endpoint,
    ServedModelError,
    ServerFault,
    checked_base,
    listed_model,
    new_session,
    request_json,
    thread_session,
)

CHAT_PREFIX = "chat:"
MAX_TOP_LOGPROBS = 20
"""The most alternatives per answer token a hosted chat API returns."""
PROBE_MESSAGE = "Reply with the single word: ready."


@dataclass(eq=False)
class ServedChat:
    """A connected chat endpoint: its model's name, what it returns, and the requests that ask it."""

    endpoint: Endpoint
    base_url: str
    name: str
    capabilities: frozenset[str]
    _session_local: threading.local = field(default_factory=threading.local)

    @property
    def spec(self) -> str:
        return f"{CHAT_PREFIX}{self.name}@{self.base_url}"

    @property
    def source_label(self) -> str:
        return f"the chat endpoint at {self.base_url}"

    def describe(self) -> str:
        given = "with answer log-probs" if ANSWER_LOGPROBS in self.capabilities else "text only"
        return f"{self.name} at {self.base_url} · chat · {given}"

    def chat(self, requests: Sequence[ChatRequest], progress: ProgressCallback | None = None) -> list[list[ChatAnswer]]:
        """Each request's answers, in order; ``--concurrency`` requests in flight, each backing off on 429/503."""
        results: list[list[ChatAnswer]] = [[] for _ in requests]
        done = 0
        lock = threading.Lock()

        def one(index: int) -> None:
            nonlocal done
            results[index] = self.ask(requests[index])
            with lock:
                done += 1
                if progress is not None:
                    progress(done, len(requests))

        workers = max(1, min(self.endpoint.concurrency, len(requests)))
        if workers == 1:
            for i in range(len(requests)):
                one(i)
        else:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                list(pool.map(one, range(len(requests))))
        return results

    def ask(self, request: ChatRequest) -> list[ChatAnswer]:
        """One request's ``samples`` answers, checked."""
        if request.top_logprobs and ANSWER_LOGPROBS not in self.capabilities:
            raise ServedModelError(f"{self.source_label} returns no answer log-probs, and this test asked for them.")
        body: dict[str, Any] = {
            "model": self.name,
            "messages": request.as_messages(),
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "n": request.samples,
            "seed": request.seed,
        }
        if request.top_logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = min(request.top_logprobs, MAX_TOP_LOGPROBS)
        session = thread_session(self._session_local)
        data = request_json(session, "POST", f"{self.base_url}/chat/completions", self.endpoint, body)
        return chat_answers(data, request, self.base_url)


def chat_answers(data: dict[str, Any], request: ChatRequest, where: str) -> list[ChatAnswer]:
    """The answers in one ``/chat/completions`` reply, every field checked; a fault is one line naming it."""
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not all(isinstance(c, dict) for c in choices):
        raise answers.fault(where, "'choices' that is not a list of objects")
    if len(choices) != request.samples:
        raise answers.fault(where, f"{len(choices)} choices for the {request.samples} answers asked for (n)")
    ordered = sorted(choices, key=lambda c: c.get("index", 0) if isinstance(c.get("index", 0), int) else 0)
    return [_answer(choice, request, where) for choice in ordered]


def _answer(choice: dict[str, Any], request: ChatRequest, where: str) -> ChatAnswer:
    message = choice.get("message")
    if not isinstance(message, dict):
        raise answers.fault(where, "a choice without a message object")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise answers.fault(where, f"a message content of type {type(content).__name__} instead of text")
    finish = choice.get("finish_reason")
    if finish is not None and not isinstance(finish, str):
        raise answers.fault(where, f"a finish_reason of type {type(finish).__name__}")
    logprobs = _answer_logprobs(choice.get("logprobs"), request, where) if request.top_logprobs else None
    return ChatAnswer(text=content or "", finish=finish or "stop", logprobs=logprobs)


def _answer_logprobs(value: Any, request: ChatRequest, where: str) -> tuple[tuple[tuple[str, float], ...], ...] | None:
    if value is None:
        return None  # this answer came without them: the test counts answers instead
    content = value.get("content") if isinstance(value, dict) else None
    if not isinstance(content, list):
        raise answers.fault(where, "answer log-probs whose 'content' is not a list")
    tokens = []
    for position, entry in enumerate(content, start=1):
        top = entry.get("top_logprobs") if isinstance(entry, dict) else None
        if not isinstance(top, list) or not top:
            raise answers.fault(where, f"no top_logprobs list for answer token {position}")
        pairs = []
        for alternative in top[: request.top_logprobs]:
            token = alternative.get("token") if isinstance(alternative, dict) else None
            if not isinstance(token, str):
                raise answers.fault(where, f"an alternative without its token text at answer token {position}")
            what = f"the alternative {token!r} at answer token {position}"
            pairs.append((token, answers.logprob_value(alternative.get("logprob"), what, where)))
        tokens.append(tuple(pairs))
    return tuple(tokens)


def connect_chat(endpoint: Endpoint) -> ServedChat:
    """Reach a chat endpoint, pick its model, and ask once whether answer log-probs come back."""
    base = checked_base(endpoint)
    name, _ = listed_model(new_session(), base, endpoint)
    chat = ServedChat(endpoint=endpoint, base_url=base, name=name, capabilities=frozenset({CHAT_TEXT}))
    probe = ChatRequest(messages=(("user", PROBE_MESSAGE),), max_tokens=2, top_logprobs=5)
    chat.capabilities = frozenset({CHAT_TEXT, ANSWER_LOGPROBS})
    try:
        answered = chat.ask(probe)
    except ServerFault:
        raise
    except answers.ServedAnswerError:
        answered = []  # log-probs in a form LeakLens cannot read count as none
    except ServedModelError as exc:
        if exc.status not in (400, 422):
            raise
        answered = []  # the server refuses log-probs: text alone
    if not answered or answered[0].logprobs is None:
        chat.capabilities = frozenset({CHAT_TEXT})
        chat.ask(ChatRequest(messages=(("user", PROBE_MESSAGE),), max_tokens=2))  # it must at least answer
    return chat
