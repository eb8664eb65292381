"""Reference model (Carlini et al. 2021): the target's loss compared with another model's on the same text.

Text that is simply easy (common words, boilerplate) has low loss under any model; text the target saw
in training has lower loss under the target than under a model that did not see it. So the score is
loss_reference − loss_target (= −(loss_target − loss_reference)): high when the target finds the text
unusually easy. Each loss is that model's own per-token mean, so different tokenizers are fine.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.engine.handle import ModelHandle
from core.engine.records import TokenRecords, scored_text
from core.engine.scoring import ScoringModel, score_texts
from core.methods.base import AuxiliaryRecords, Method, MethodConfigError, PassContext, PassStep

DEFAULT_REFERENCE = "smollm2-135m"
"""A small, openly trained model that works offline: the natural reference for larger or fine-tuned
targets. It must differ from the target, otherwise every score is 0."""


@dataclass(frozen=True)
class ReferenceModel(Method):
    reference: str = DEFAULT_REFERENCE
    """Model spec of the reference model (bundled name, local directory or hub id)."""

    family = "reference"
    title = "Reference model"
    description = (
        "Reference-model loss minus target-model loss: text the target finds much easier than a "
        "comparable model does was likely in its training data."
    )
    needs = frozenset({"reference"})
    provides = "reference"
    pass_title = "reference model"

    def __post_init__(self) -> None:
        if not isinstance(self.reference, str) or not self.reference.strip():
            raise MethodConfigError("The reference model needs a model spec, e.g. reference:reference=smollm2-135m.")

    @property
    def key(self) -> str:
        return "reference_" + re.sub(r"[^A-Za-z0-9.]+", "_", self.reference.strip()).strip("_")

    @property
    def label(self) -> str:
        return f"Reference model ({self.reference})"

    def score(self, records: TokenRecords, aux: AuxiliaryRecords | None = None) -> float:
        reference: TokenRecords = self._require_aux(aux, "reference")
        return reference.loss - records.loss

    def pass_cost(self) -> int:
        return 1

    def compute_pass(self, context: PassContext, step: PassStep) -> list[Any]:
        """Each passage under the reference model, on exactly the text the target scored (so truncation never
        compares unequal spans)."""
        reference_lm = self._reference_model(context.lm, context.reference_lm)
        spans = [scored_text(r) for r in context.records]
        return list(
            score_texts(reference_lm, spans, kgram_max=0, token_budget=context.token_budget, progress=step(len(spans)))
        )

    def _reference_model(self, lm: ScoringModel, given: ScoringModel | None) -> ScoringModel:
        if given is None:
            if self.reference.strip() == lm.spec:
                raise MethodConfigError(
                    f"The reference model must differ from the target model (both are '{lm.spec}'); choose "
                    "another, e.g. reference:reference=SPEC."
                )
            raise MethodConfigError(
                f"The reference model '{self.reference.strip()}' was not loaded: the run that asks for it loads it "
                "beside the target model (reference_source), under the same device, dtype and loader."
            )
        if given is lm or given.spec == lm.spec:
            raise MethodConfigError(f"The reference model must differ from the target model (both are '{lm.spec}').")
        if given.spec != self.reference.strip():
            raise MethodConfigError(
                f"The reference model given is '{given.spec}' but the method asks for '{self.reference}'."
            )
        return given


def reference_source(model: ModelHandle, methods: Sequence[Method]) -> ScoringModel | None:
    """The reference model the ``methods`` ask for, loaded beside ``model`` (its setup and loader, its own
    start-token rule), or None when none asks; one run reads one reference model, never the target itself."""
    specs = {m.reference.strip() for m in methods if isinstance(m, ReferenceModel)}
    if len(specs) > 1:
        raise MethodConfigError(f"One run can use one reference model; got {', '.join(sorted(specs))}.")
    if not specs:
        return None
    reference = model.beside(specs.pop())
    if reference is model:
        raise MethodConfigError(
            f"The reference model must differ from the target model (both are '{model.spec}'); choose another, "
            "e.g. reference:reference=SPEC."
        )
    return reference.load()
