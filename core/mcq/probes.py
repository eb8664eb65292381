"""Option-completion probes: cut an option in half and see whether the model finishes it.

For option ``k`` of a question, the *prefix* is the question, options ``0..k-1`` in full and the first
half of option ``k``; the *ground truth* is the rest of option ``k``.

Token boundary. The text ``prefix + ground truth`` is tokenized once, with character offsets. The
probe's context is the start token plus every token of that tokenization that ends at or before the
cut: the prefix exactly as the tokenizer splits it when the whole option follows. The expected next
token is the first token that reaches past the cut, i.e. the first token of the ground truth as the
tokenizer splits it in context. When the cut falls inside a token (``"Geneti|c drift"`` where
``"Genetic"`` is one token), that token also covers the last characters of the prefix (its *head*,
``"Geneti"``); those characters are left to the model rather than fed as an unnatural partial token,
and are stripped from the completion before it is compared with the ground truth. Tokenizing the
prefix on its own is compared with the in-context tokens only to report how the cut fell
(``boundary``): ``aligned`` (a token starts at the cut and the prefix tokenizes the same alone),
``retokenized`` (a token starts at the cut, but the prefix alone tokenizes differently at its end) or
``inside_token``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from core.data.questions import MCQuestion, PromptLayout
from core.engine.model_source import ScoringModel, decode, decode_complete, encode, encode_with_offsets
from core.errors import InputTextError

CutMode = Literal["chars", "words"]
CUT_MODES: tuple[str, ...] = ("chars", "words")
Boundary = Literal["aligned", "retokenized", "inside_token"]


def cut_offset(option: str, mode: CutMode = "chars") -> int:
    """Where to cut an option, as a character offset into it.

    ``chars``: after half the characters (rounded down), as the study does; works for any script,
    Chinese included. ``words``: after half the whitespace-separated words (rounded down, at least
    one), before the space that follows, so the ground truth starts with a space as BPE vocabularies
    prefer; options of a single word fall back to the character cut.
    """
    if not option:
        raise InputTextError("An option is empty, so it cannot be cut.")
    if mode == "chars":
        return len(option) // 2
    if mode == "words":
        words = list(re.finditer(r"\S+", option))
        if len(words) < 2:
            return len(option) // 2
        return words[len(words) // 2 - 1].end()
    raise InputTextError(f"Unknown cut mode '{mode}'; use one of {', '.join(CUT_MODES)}.")


@dataclass(frozen=True)
class Probe:
    """One cut option: what the model is shown and what it should say."""

    question_index: int
    option_index: int
    prefix: str
    """Question, earlier options and the first half of this option (the text the study shows)."""
    ground_truth: str
    """The rest of the option, to be reproduced."""
    context_ids: tuple[int, ...]
    """Start token + the in-context tokens that end at or before the cut."""
    expected_id: int
    """First token of the ground truth as the tokenizer splits it in context."""
    head: str
    """Prefix characters covered by the expected token (non-empty only when the cut is inside a token)."""
    n_truth_tokens: int
    """Tokens from the expected token to the end of the option, in context."""
    boundary: Boundary
    n_context_dropped: int = 0
    """Earliest prompt tokens left out because the prompt exceeded the model's context."""


def option_prefixes(question: MCQuestion, layout: PromptLayout, mode: CutMode) -> list[tuple[str, str]]:
    """(prefix, ground truth) for each option of a question."""
    text, spans = layout.render(question)
    pairs = []
    for start, end in spans:
        cut = start + cut_offset(text[start:end], mode)
        pairs.append((text[:cut], text[cut:end]))
    return pairs


def build_probes(
    lm: ScoringModel,
    question: MCQuestion,
    layout: PromptLayout,
    mode: CutMode = "chars",
    *,
    slack_tokens: int = 2,
) -> list[Probe]:
    """One probe per option of ``question`` (see the module docstring for the token boundary)."""
    return [
        _probe(lm, question, k, prefix, truth, slack_tokens)
        for k, (prefix, truth) in enumerate(option_prefixes(question, layout, mode))
    ]


def _probe(lm: ScoringModel, question: MCQuestion, k: int, prefix: str, truth: str, slack: int) -> Probe:
    cut = len(prefix)
    full = prefix + truth
    ids, offsets = encode_with_offsets(lm, full)
    first = next((i for i, (_, end) in enumerate(offsets) if end > cut), None)
    if first is None:
        raise InputTextError(
            f"Question {question.index}, option {question.letters[k]}: the tokenizer's offsets do not reach the "
            "ground truth, so its first token cannot be found."
        )
    head = _head(lm, ids[:first], prefix, offsets[first - 1][1] if first > 0 else 0)
    if head:
        boundary: Boundary = "inside_token"
    else:
        alone = encode(lm, prefix) if prefix else []
        boundary = "aligned" if alone == ids[:first] else "retokenized"
    context = [lm.start_token_id] + list(ids[:first])
    n_truth = len(ids) - first
    room = lm.max_context - (n_truth + slack)
    dropped = 0
    if len(context) > room:
        dropped = len(context) - max(room, 2)
        context = [lm.start_token_id] + context[1 + dropped :]
    return Probe(
        question_index=question.index,
        option_index=k,
        prefix=prefix,
        ground_truth=truth,
        context_ids=tuple(context),
        expected_id=int(ids[first]),
        head=head,
        n_truth_tokens=n_truth,
        boundary=boundary,
        n_context_dropped=dropped,
    )


def _head(lm: ScoringModel, context: Sequence[int], prefix: str, covered: int) -> str:
    """Prefix characters the context does not spell out, which the expected token must produce."""
    spelled = decode_complete(lm, context)
    if prefix.startswith(spelled):
        return prefix[len(spelled) :]
    # A tokenizer whose decoding normalises text: fall back to the offsets.
    return prefix[min(covered, len(prefix)) :]


def continuation_text(lm: ScoringModel, probe: Probe, generated: Sequence[int]) -> str:
    """What the generated tokens add to the context's text (decoded together, so merges stay right)."""
    context = list(probe.context_ids[1:])
    before = decode_complete(lm, context)
    after = decode(lm, context + list(generated))
    if after.startswith(before):
        return after[len(before) :]
    return decode(lm, generated)


def completion_candidate(probe: Probe, continuation: str) -> str:
    """The part of a continuation to compare with the ground truth: past the head, same length."""
    if probe.head:
        if not continuation.startswith(probe.head):
            # The model disagrees with the prefix itself; compare what it wrote where the truth goes.
            return continuation[len(probe.head) : len(probe.head) + len(probe.ground_truth)]
        continuation = continuation[len(probe.head) :]
    return continuation[: len(probe.ground_truth)]
