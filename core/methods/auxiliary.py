"""The extra passes some detectors compare against, computed once for a whole method set.

``compute_auxiliary`` looks at what the methods need (``Method.needs``) and runs only those passes,
each batched over all passages: the passage under a reference model, the passage after a non-member
prefix (ReCaLL), and reworded neighbours under the target model. Cost in forward passes per passage:
reference 1 (on the reference model), prefixed 1, neighbours 1 + n_neighbours.

``AuxiliaryRecords`` holds one pass of each kind, so a method set may ask for one reference model, one
prefix and one neighbour configuration; mixing several of a kind is a clear error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from core.engine.models import LoadedModel, load_model
from core.engine.progress import ProgressCallback, offset_progress
from core.engine.scoring import DEFAULT_TOKEN_BUDGET, TokenRecords, score_texts, scored_text
from core.methods.base import AuxiliaryRecords, Method, MethodConfigError
from core.methods.neighbourhood import Neighbourhood
from core.methods.neighbours import generate_neighbours
from core.methods.recall import Recall
from core.methods.reference import ReferenceModel

_M = TypeVar("_M", bound=Method)


def needed_passes(methods: Sequence[Method]) -> frozenset[str]:
    """Union of the auxiliary passes the methods read."""
    return frozenset().union(*(m.needs for m in methods)) if methods else frozenset()


def _single(methods: Sequence[Method], cls: type[_M], what: str) -> _M | None:
    found = {m for m in methods if isinstance(m, cls)}
    configs = {(type(m), tuple(m.params().items())) for m in found}
    if len(configs) > 1:
        keys = ", ".join(sorted(m.key for m in found))
        raise MethodConfigError(f"One run can use one {what} ({keys} differ); run them separately.")
    return next(iter(found), None)


def auxiliary_cost(methods: Sequence[Method]) -> int:
    """Extra forward passes per passage the methods need (for progress totals and estimates)."""
    cost = 0
    needs = needed_passes(methods)
    if "reference" in needs:
        cost += 1
    if "prefixed" in needs:
        cost += 1
    neighbourhood = _single(methods, Neighbourhood, "neighbour configuration")
    if neighbourhood is not None:
        cost += 1 + neighbourhood.n_neighbours
    return cost


def compute_auxiliary(
    lm: LoadedModel,
    texts: Sequence[str],
    methods: Sequence[Method],
    records: Sequence[TokenRecords],
    *,
    reference_lm: LoadedModel | None = None,
    token_budget: int = DEFAULT_TOKEN_BUDGET,
    progress: ProgressCallback | None = None,
) -> list[AuxiliaryRecords]:
    """One ``AuxiliaryRecords`` per passage with exactly the passes ``methods`` need.

    ``records`` are the passages' records under ``lm`` (from ``score_texts``). ``reference_lm`` is loaded
    from the reference method's spec when not given. Progress counts passage-passes over all passes.
    """
    if len(texts) != len(records):
        raise MethodConfigError(f"Got {len(texts)} texts but {len(records)} token records.")
    needs = needed_passes(methods)
    unknown = needs - {"reference", "prefixed", "neighbours"}
    if unknown:
        raise MethodConfigError(f"Unknown auxiliary pass(es): {', '.join(sorted(unknown))}.")
    n = len(records)
    if not needs or n == 0:
        return [AuxiliaryRecords() for _ in range(n)]

    reference_method = _single(methods, ReferenceModel, "reference model")
    recall_method = _single(methods, Recall, "ReCaLL prefix")
    neighbourhood = _single(methods, Neighbourhood, "neighbour configuration")
    total = n * auxiliary_cost(methods)
    tracker = _Tracker(progress, total)
    # The reference model and the neighbours read exactly the text the target scored, so truncation never
    # compares unequal spans; the prefixed pass tokenizes whole passages and ReCaLL aligns by token.
    spans = [scored_text(r) for r in records]

    reference: list[TokenRecords | None] = [None] * n
    if reference_method is not None:
        reference_lm = _reference_model(lm, reference_method, reference_lm)
        reference = list(
            score_texts(reference_lm, spans, kgram_max=0, token_budget=token_budget, progress=tracker.step(n))
        )

    prefixed: list[TokenRecords | None] = [None] * n
    if recall_method is not None:
        prefixed = list(
            score_texts(
                lm,
                [r.text for r in records],
                kgram_max=0,
                token_budget=token_budget,
                prefix=recall_method.prefix,
                max_tokens=max(r.n_tokens for r in records),
                progress=tracker.step(n),
            )
        )

    neighbours: list[tuple[TokenRecords, ...] | None] = [None] * n
    if neighbourhood is not None:
        k = neighbourhood.n_neighbours
        texts_by_passage = generate_neighbours(
            lm,
            records,
            n_neighbours=k,
            fraction=neighbourhood.fraction,
            seed=neighbourhood.seed,
            token_budget=token_budget,
            progress=tracker.step(n),
        )
        flat = [t for group in texts_by_passage for t in group]
        scored = score_texts(lm, flat, kgram_max=0, token_budget=token_budget, progress=tracker.step(n * k))
        neighbours = [tuple(scored[i * k : (i + 1) * k]) for i in range(n)]

    return [AuxiliaryRecords(reference=reference[i], neighbours=neighbours[i], prefixed=prefixed[i]) for i in range(n)]


def _reference_model(lm: LoadedModel, method: ReferenceModel, given: LoadedModel | None) -> LoadedModel:
    if given is None:
        if method.reference.strip() == lm.spec:
            raise MethodConfigError(
                f"The reference model must differ from the target model (both are '{lm.spec}'); choose "
                "another, e.g. reference:reference=SPEC."
            )
        return load_model(method.reference.strip())
    if given is lm or given.spec == lm.spec:
        raise MethodConfigError(f"The reference model must differ from the target model (both are '{lm.spec}').")
    if given.spec != method.reference.strip():
        raise MethodConfigError(
            f"The reference model given is '{given.spec}' but the method asks for '{method.reference}'."
        )
    return given


class _Tracker:
    """Hands each extra pass its share of one progress bar over all passes together."""

    def __init__(self, progress: ProgressCallback | None, total: int) -> None:
        self.progress = progress
        self.total = total
        self.offset = 0

    def step(self, size: int) -> ProgressCallback | None:
        offset = self.offset
        self.offset += size
        return offset_progress(self.progress, offset, self.total, weight=size)
