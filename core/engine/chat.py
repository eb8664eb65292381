"""Asking a model in conversation turns: the request, the answer, and what makes an answer unreadable.

Hosted chat APIs return text and at most the log-probs of their answer's own tokens: no prompt log-probs, no
raw completions. The tests built for them (n-gram coverage, DE-COP, TS-Guessing, guided instruction) ask
questions and read answers, so they run on any source that can chat: a server's ``/chat/completions``
(``core.engine.served_chat``) or a model in this process through its own chat template
(``core.engine.local_chat``), which gives the same greedy answers. An answer that is a refusal, empty, or cut
off where the test needs it whole is counted and shown, never read as an answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from core.engine.progress import ProgressCallback

REFUSED = "refused"
EMPTY = "empty"
CUT_OFF = "cut off"
PROBLEMS = (REFUSED, EMPTY, CUT_OFF)
"""Why an answer is not read, in the order the tables count them."""
_REFUSAL = re.compile(
    r"^\W*(i'?m sorry|i am sorry|sorry, (but )?i|i can(no|')?t (help|assist|provide|do|comply)|i cannot|i won'?t|"
    r"i'?m (not able|unable)|i am (not able|unable)|as an ai\b)",
    re.IGNORECASE,
)
"""How a chat model declines, at the start of its answer."""


@dataclass(frozen=True)
class ChatRequest:
    """One conversation to answer, and how: the settings here change answers, so they are part of a run's key."""

    messages: tuple[tuple[str, str], ...]
    """(role, content) turns, ``user`` last."""
    max_tokens: int
    temperature: float = 0.0
    samples: int = 1
    """Answers drawn for the same conversation (``n`` in the API)."""
    seed: int = 0
    top_logprobs: int = 0
    """Top alternatives per answer token (0: no log-probs asked for; at most 20, as hosted APIs allow)."""

    def as_messages(self) -> list[dict[str, str]]:
        return [{"role": role, "content": content} for role, content in self.messages]


@dataclass(frozen=True)
class ChatAnswer:
    """One answer: its text, why it ended, and (when asked and given) each answer token's top alternatives."""

    text: str
    finish: str
    """``stop`` (the model ended it), ``length`` (``max_tokens`` reached) or what the server said."""
    logprobs: tuple[tuple[tuple[str, float], ...], ...] | None = None
    """Per answer token: (token text, log-prob) of its likeliest alternatives, best first; None: not given."""


def answer_problem(answer: ChatAnswer, *, whole: bool = False) -> str | None:
    """Why ``answer`` cannot be read as one (``REFUSED``, ``EMPTY``, ``CUT_OFF``), or None when it can.

    ``whole``: the test needs a complete answer (a letter, a filled-in option), so one cut off at
    ``max_tokens`` is not read; a continuation that runs to its length is what it was asked for."""
    text = answer.text.strip()
    if not text:
        return EMPTY
    if _REFUSAL.match(text):
        return REFUSED
    if whole and answer.finish == "length":
        return CUT_OFF
    return None


class ChatSource(Protocol):
    """What every chat test asks of its model."""

    @property
    def spec(self) -> str: ...

    @property
    def capabilities(self) -> frozenset[str]: ...

    def chat(
        self, requests: Sequence[ChatRequest], progress: ProgressCallback | None = None
    ) -> list[list[ChatAnswer]]: ...
