"""The extra passes some detectors compare against, computed once for a whole method set.

A method names the passes it reads (``Method.needs``); the method that ``provides`` a pass computes it
(``Method.compute_pass``), batched over all passages, once however many methods read it. Cost in forward
passes per passage is each provider's ``pass_cost()``: reference 1 (on the reference model), prefixed 1,
neighbours 1 + n_neighbours. A detector with a pass of its own defines it in its own module (``provides``,
``pass_cost``, ``compute_pass``): nothing here changes.

One method set may hold one configuration of each pass (one reference model, one prefix, one neighbour
setting); mixing several is a clear error.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.engine.progress import ProgressCallback, offset_progress
from core.engine.scoring import DEFAULT_TOKEN_BUDGET, ScoringModel, TokenRecords
from core.methods.base import AuxiliaryRecords, Method, MethodConfigError, PassContext


def needed_passes(methods: Sequence[Method]) -> frozenset[str]:
    """Union of the auxiliary passes the methods read."""
    return frozenset().union(*(m.needs for m in methods)) if methods else frozenset()


def pass_providers(methods: Sequence[Method]) -> dict[str, Method]:
    """The method that computes each needed pass, in the order the methods were given.

    Several methods providing one pass must agree on its configuration (one reference model per run); a pass
    nobody provides is an error naming it.
    """
    needs = needed_passes(methods)
    unknown = sorted(name for name in needs if not any(m.provides == name for m in methods))
    if unknown:
        raise MethodConfigError(f"Unknown auxiliary pass(es): {', '.join(unknown)}.")
    providers: dict[str, Method] = {}
    for method in methods:
        name = method.provides
        if name is None or name not in needs:
            continue
        first = providers.setdefault(name, method)
        if (type(first), tuple(first.params().items())) != (type(method), tuple(method.params().items())):
            keys = ", ".join(sorted({m.key for m in methods if m.provides == name}))
            raise MethodConfigError(f"One run can use one {first.pass_title} ({keys} differ); run them separately.")
    return providers


def auxiliary_cost(methods: Sequence[Method]) -> int:
    """Extra forward passes per passage the methods need (for progress totals and estimates)."""
    return sum(provider.pass_cost() for provider in pass_providers(methods).values())


def compute_auxiliary(
    lm: ScoringModel,
    texts: Sequence[str],
    methods: Sequence[Method],
    records: Sequence[TokenRecords],
    *,
    reference_lm: ScoringModel | None = None,
    token_budget: int = DEFAULT_TOKEN_BUDGET,
    progress: ProgressCallback | None = None,
) -> list[AuxiliaryRecords]:
    """One ``AuxiliaryRecords`` per passage with exactly the passes ``methods`` need.

    ``records`` are the passages' records under ``lm`` (from ``score_texts``). ``reference_lm`` is the reference
    model the reference method compares with (``reference.reference_source``). Progress counts passage-passes
    over all passes.
    """
    if len(texts) != len(records):
        raise MethodConfigError(f"Got {len(texts)} texts but {len(records)} token records.")
    providers = pass_providers(methods)
    n = len(records)
    if not providers or n == 0:
        return [AuxiliaryRecords() for _ in range(n)]
    tracker = _Tracker(progress, n * sum(p.pass_cost() for p in providers.values()))
    context = PassContext(lm, records, token_budget, reference_lm)
    passes = {name: provider.compute_pass(context, tracker.step) for name, provider in providers.items()}
    return [AuxiliaryRecords(**{name: values[i] for name, values in passes.items()}) for i in range(n)]


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
