"""One check of every answer a served model gives, before anything is computed from it.

A server is outside LeakLens: its JSON may have the wrong types, counts that do not match what was sent, or
values no model can produce (a log-prob above 0 is a probability above 1; a rank below 1). Each fault is its
own ``ServedAnswerError`` line naming the server and what it answered, instead of a traceback or a number
that silently turns a loss negative. Log-probs within ``ROUNDING_SLACK`` above 0 are float rounding of a
certain token and read as 0; ``-inf`` (probability zero for a token the server was given) is a fault too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from core.errors import ModelLoadError

ROUNDING_SLACK = 1e-4
"""How far above 0 a log-prob may be and still be read as 0 (a certain token, summed in float32)."""


class ServedAnswerError(ModelLoadError):
    """A served model's answer that cannot be used: one line naming the server and the answer."""


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def fault(where: str, what: str) -> ServedAnswerError:
    return ServedAnswerError(f"The server at {where} answered {what}; LeakLens cannot use that answer.")


def choices_of(data: dict[str, Any], n_prompts: int, where: str) -> list[dict[str, Any]]:
    """The completion choices of one request, one per prompt and in the prompts' order."""
    choices = data.get("choices")
    if not isinstance(choices, list):
        raise fault(where, f"'choices' as {_shown(choices)} instead of a list")
    if not all(isinstance(c, dict) for c in choices):
        raise fault(where, "'choices' holding something other than objects")
    if len(choices) != n_prompts:
        raise fault(where, f"{len(choices)} choices for {n_prompts} prompts")
    indexes = [c.get("index", i) for i, c in enumerate(choices)]
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in indexes) or sorted(indexes) != list(
        range(n_prompts)
    ):
        raise fault(where, f"choice indexes {_shown(indexes)} instead of 0 to {n_prompts - 1}")
    return [choice for _, choice in sorted(zip(indexes, choices, strict=True), key=lambda pair: pair[0])]


def prompt_entries(choice: dict[str, Any], prompt: Sequence[int], where: str) -> list[dict[str, Any] | None] | None:
    """The per-position log-prob entries of a prompt (vLLM's ``prompt_logprobs``): one per prompt token, the
    first ``None`` (nothing predicts it); None when the server returns none at all (it cannot: the caller says
    what that leaves out)."""
    entries = choice.get("prompt_logprobs")
    if entries is None:
        return None
    if not isinstance(entries, list):
        raise fault(where, f"prompt_logprobs as {_shown(entries)} instead of a list")
    if len(entries) != len(prompt):
        raise fault(where, f"{len(entries)} prompt log-prob entries for a prompt of {len(prompt)} tokens")
    for position, entry in enumerate(entries[1:], start=2):
        if not isinstance(entry, dict):
            raise fault(where, f"a prompt log-prob entry {_shown(entry)} at token {position} instead of an object")
    return entries


def logprob_value(value: Any, what: str, where: str) -> float:
    """A log-prob the server gave for ``what``: a finite number at most 0 (rounding above 0 read as 0)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise fault(where, f"the log-prob {_shown(value)} for {what}, which is not a number")
    number = float(value)
    if math.isnan(number):
        raise fault(where, f"the log-prob NaN for {what}")
    if number == -math.inf:
        raise fault(where, f"the log-prob -inf (probability zero) for {what}, a token it was given to score")
    if number > ROUNDING_SLACK:
        raise fault(where, f"the log-prob {number:+g} for {what} (a probability of {math.exp(min(number, 700)):.3g})")
    return min(number, 0.0)


def token_logprob(entry: dict[str, Any], token: int, position: int, where: str) -> tuple[float, int]:
    """(log-prob, rank) of ``token`` at 1-based prompt ``position`` from its entry; rank 0 when not given."""
    what = f"token {token} at position {position}"
    value = entry.get(str(token))
    if value is None:
        raise fault(where, f"no log-prob for {what}, the token it was sent")
    if not isinstance(value, dict):
        raise fault(where, f"{_shown(value)} for {what} instead of an object with 'logprob' and 'rank'")
    logprob = logprob_value(value.get("logprob"), what, where)
    rank = value.get("rank")
    if rank is None:
        return logprob, 0
    if isinstance(rank, bool) or not isinstance(rank, int) or rank < 1:
        raise fault(where, f"the rank {_shown(rank)} for {what} (ranks start at 1)")
    return logprob, rank


def ranked_tokens(entry: dict[str, Any], position: int, where: str) -> list[tuple[int, int]]:
    """(rank, token id) of every token an entry lists."""
    out = []
    for key, value in entry.items():
        if not isinstance(key, str) or not key.lstrip("-").isdigit() or int(key) < 0:
            raise fault(where, f"the token id {_shown(key)} at position {position}")
        rank = value.get("rank") if isinstance(value, dict) else None
        if isinstance(rank, bool) or not isinstance(rank, int) or rank < 1:
            raise fault(where, f"the rank {_shown(rank)} for token {key} at position {position} (ranks start at 1)")
        out.append((rank, int(key)))
    return sorted(out)


def token_ids(value: Any, what: str, where: str) -> list[int]:
    """A list of token ids (non-negative integers) the server gave as ``what``."""
    if not isinstance(value, list) or not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in value):
        raise fault(where, f"{what} as {_shown(value)} instead of a list of token ids")
    return list(value)


def context_length(value: Any, where: str, default: int) -> int:
    """The model's context (``max_model_len``) from the model list: a positive integer, or ``default``."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 2:
        raise fault(where, f"max_model_len {_shown(value)} for the model instead of a token count")
    return value
