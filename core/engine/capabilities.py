"""What a model source can compute, and which detectors that rules out.

A model loaded in this process gives everything. A model behind a server gives what its API returns:
vLLM returns each prompt token's log-prob and rank and can generate, but no OpenAI-compatible API
returns the full next-token distribution. A detector whose need a source cannot meet is left out and
named with the reason; it is never computed from an approximation (such as a top-k truncation).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, TypeVar

TARGET_LOGPROBS = "target log-probs"
"""log p(x_i | x_<i) of each token of a given text (loss, zlib, Min-K%, slopes, reference, ReCaLL, neighbours)."""
DISTRIBUTION = "full next-token distribution"
"""Mean, spread and entropy of the whole next-token distribution at each position (Min-K%++)."""
TOP_ALTERNATIVES = "model's top alternatives at each position"
"""The likeliest tokens at every position of a text, which the neighbourhood test rewrites words with."""
GENERATION = "generation"
"""Greedy continuations of a prompt (the multiple-choice probes)."""
CHAT_TEXT = "chat text"
"""Answers in text to a conversation (a chat API's /chat/completions): the text-only tests (n-gram coverage)."""
ANSWER_LOGPROBS = "answer log-probs"
"""The log-probs of the answer's own tokens and their top alternatives (never the prompt's)."""
ALL_CAPABILITIES = frozenset({TARGET_LOGPROBS, DISTRIBUTION, TOP_ALTERNATIVES, GENERATION, CHAT_TEXT, ANSWER_LOGPROBS})


class NeedsCapabilities(Protocol):
    @property
    def title(self) -> str: ...

    @property
    def requires(self) -> frozenset[str]: ...


def unmet(requires: Iterable[str], capabilities: Iterable[str]) -> list[str]:
    """The required capabilities a source lacks, in a stable order."""
    return sorted(set(requires) - set(capabilities))


def exclusion_note(what: str, missing: Sequence[str], source: str) -> str:
    """The line every output shows for a detector (or test) a source cannot run."""
    return f"{what} needs the {' and the '.join(missing)}, which {source} does not return: left out."


T = TypeVar("T", bound=NeedsCapabilities)


def split_supported(items: Sequence[T], capabilities: Iterable[str], source: str) -> tuple[list[T], list[str]]:
    """(the items ``capabilities`` can run, a note for each one left out)."""
    have = frozenset(capabilities)
    kept: list[T] = []
    notes: list[str] = []
    for item in items:
        missing = unmet(item.requires, have)
        if missing:
            notes.append(exclusion_note(item.title, missing, source))
        else:
            kept.append(item)
    return kept, notes
