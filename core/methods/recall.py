"""ReCaLL (Xie et al. 2024): how much a non-member prefix changes the passage's log-likelihood.

LL(x) is the passage's mean token log-prob; LL(x | P) the same with a text P the model never saw placed
before it. The score is the ratio LL(x | P) / LL(x). Both are negative, so the ratio is above 1 when the
prefix lowers the likelihood. The paper's finding is that a non-member prefix lowers it more for members
(it disturbs what the model recalls verbatim) than for non-members, so a higher ratio = more likely a
member, the orientation every LeakLens score uses.

Both log-likelihoods are averaged over the same tokens: the prefixed pass tokenizes the passage alone,
so its tokens are those of the unprefixed pass; when either pass was truncated (prefix + passage can
overflow the context) only the tokens both passes scored are compared.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from core.engine.scoring import TokenRecords, score_texts
from core.methods.base import AuxiliaryRecords, Method, MethodConfigError, PassContext, PassStep

DEFAULT_PREFIX = (
    "The Marlow Street footbridge reopened on a grey Tuesday morning after eleven weeks of repairs. "
    "Commuters found new oak handrails, a ramp on the eastern side and a small plaque naming the two "
    "welders who rebuilt the deck. The council said its next job would be the flood gates by the old "
    "mill, which jammed twice during the spring storms."
)
"""A short invented local-news paragraph written for LeakLens, so no model can have trained on it."""


@dataclass(frozen=True)
class Recall(Method):
    prefix: str = DEFAULT_PREFIX
    """Non-member text placed before each passage; use text the model cannot have seen."""

    family = "recall"
    title = "ReCaLL"
    description = (
        "Log-likelihood after an unseen prefix divided by the plain log-likelihood: an unseen prefix "
        "disturbs text the model memorised more than text it did not see."
    )
    needs = frozenset({"prefixed"})
    provides = "prefixed"
    pass_title = "ReCaLL prefix"

    def __post_init__(self) -> None:
        if not isinstance(self.prefix, str) or not self.prefix.strip():
            raise MethodConfigError("ReCaLL needs a non-empty prefix of text the model has not seen.")

    @property
    def key(self) -> str:
        if self.prefix == DEFAULT_PREFIX:
            return "recall"
        return "recall_" + hashlib.sha256(self.prefix.encode("utf-8")).hexdigest()[:8]

    @property
    def label(self) -> str:
        return "ReCaLL" if self.prefix == DEFAULT_PREFIX else f"ReCaLL (prefix {self.key.removeprefix('recall_')})"

    def score(self, records: TokenRecords, aux: AuxiliaryRecords | None = None) -> float:
        prefixed: TokenRecords = self._require_aux(aux, "prefixed")
        n = min(prefixed.n_tokens, records.n_tokens)
        if n == 0 or (prefixed.token_ids[:n] != records.token_ids[:n]).any():
            raise MethodConfigError("The prefixed pass does not hold the same tokens as the passage.")
        plain = float(records.logprobs[:n].mean())
        if plain == 0.0:
            return float("nan")  # every token certain: the ratio is undefined
        return float(prefixed.logprobs[:n].mean()) / plain

    def pass_cost(self) -> int:
        return 1

    def compute_pass(self, context: PassContext, step: PassStep) -> list[Any]:
        """Each whole passage after the prefix, tokenized alone so its tokens are the plain pass's; ``score``
        aligns the two by token."""
        records = context.records
        return list(
            score_texts(
                context.lm,
                [r.text for r in records],
                kgram_max=0,
                token_budget=context.token_budget,
                prefix=self.prefix,
                max_tokens=max(r.n_tokens for r in records),
                progress=step(len(records)),
            )
        )
