"""The token every passage is scored after: one documented rule for every model spec.

The start token conditions every position, not only the first: the same SmolLM2 weights scored after
its chat tokenizer's ``bos`` (``<|im_start|>``) instead of ``<|endoftext|>`` (what it was trained after)
moved per-text losses by up to 0.56. The rule, in order:

1. ``--start-token TOKEN`` when the user gives one (it must be a single token of the vocabulary);
2. the tokenizer's ``bos`` token, unless it is a chat-role marker (``<|im_start|>``, ``<start_of_turn>``,
   ``<|start_header_id|>``, ...): plain passages are not chat turns;
3. ``<|endoftext|>`` when the vocabulary has it (the document separator of GPT-2-style vocabularies:
   SmolLM, Pythia / GPT-NeoX, Qwen);
4. the ``eos`` token, unless it is a chat-role marker.

Examples: SmolLM2 (bundled or a saved copy) -> ``<|endoftext|>``; Pythia -> ``<|endoftext|>`` (its bos);
Llama 2 -> ``<s>``; Llama 3 -> ``<|begin_of_text|>``; Qwen2.5 (no bos) -> ``<|endoftext|>``;
Gemma 3 -> ``<bos>``.
"""

from __future__ import annotations

import re
from typing import cast

from transformers import PreTrainedTokenizerBase

from core.errors import ModelLoadError

START_TOKEN_RULE = 1
"""Raised whenever the rule changes, so stored runs keyed by an older rule are not reused."""
ENDOFTEXT = "<|endoftext|>"
_CHAT_ROLE = re.compile(
    r"im_start|im_end|start_header_id|end_header_id|eot_id|start_of_turn|end_of_turn|\|(user|assistant|system)\|"
)


def is_chat_role_token(token: str | None) -> bool:
    return bool(token) and bool(_CHAT_ROLE.search(str(token)))


def choose_start_token(tokenizer: PreTrainedTokenizerBase, spec: str, override: str | None = None) -> str:
    """The start token for ``spec`` by the rule in the module docstring."""
    if override:
        _require_single_token(tokenizer, override, spec)
        return override
    bos = tokenizer.bos_token
    if bos and not is_chat_role_token(bos):
        return str(bos)
    if _in_vocabulary(tokenizer, ENDOFTEXT):
        return ENDOFTEXT
    eos = tokenizer.eos_token
    if eos and not is_chat_role_token(eos):
        return str(eos)
    raise ModelLoadError(
        f"Model '{spec}' has no plain-text start token (bos {bos!r}, eos {eos!r}, no {ENDOFTEXT}); "
        "name one with --start-token TOKEN."
    )


def token_id_of(tokenizer: PreTrainedTokenizerBase, token: str, spec: str) -> int:
    return _require_single_token(tokenizer, token, spec)


def _in_vocabulary(tokenizer: PreTrainedTokenizerBase, token: str) -> bool:
    token_id = tokenizer.convert_tokens_to_ids(token)
    return token_id is not None and not (token_id == tokenizer.unk_token_id and token != tokenizer.unk_token)


def _require_single_token(tokenizer: PreTrainedTokenizerBase, token: str, spec: str) -> int:
    if not _in_vocabulary(tokenizer, token):
        raise ModelLoadError(f"The tokenizer of '{spec}' has no token '{token}' to start passages with.")
    return int(cast(int, tokenizer.convert_tokens_to_ids(token)))  # one token string: one id, not a list
