"""The whole multiple-choice study for one model and benchmark: probes on the original and on the
shuffled options, optionally the option-order test, and the JSON layout the CLI and page share."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from core.data.questions import MCQuestion
from core.engine.capabilities import GENERATION, TARGET_LOGPROBS
from core.engine.model_source import ScoringModel, require_capabilities
from core.engine.progress import ProgressCallback, offset_progress
from core.mcq.completion import PROBE_KINDS, MCQConfig, MCQRun, Mitigation, QuestionResult, run_mcq_sets, summary_row
from core.mcq.permutation import PermutationResult, QuestionOrders, permutation_test


@dataclass(frozen=True)
class MCQReport:
    mitigation: Mitigation
    shuffled_questions: tuple[MCQuestion, ...]
    permutation: PermutationResult | None

    @property
    def original(self) -> MCQRun:
        return self.mitigation.original

    @property
    def shuffled(self) -> MCQRun:
        return self.mitigation.shuffled

    def question_rows(self) -> list[dict[str, object]]:
        """Per question: scores before and after shuffling (and the order test's rank)."""
        ranks = {q.index: q for q in self.permutation.questions} if self.permutation else {}
        rows = []
        for before, after in zip(self.original.results, self.shuffled.results):
            row = before.row()
            for kind in PROBE_KINDS:
                row[f"{kind}_shuffled"] = after.score(kind)
            if ranks:
                orders = ranks[before.question.index]
                row["order_rank"] = orders.rank
                row["order_percentile"] = orders.percentile
            rows.append(row)
        return rows

    def to_dict(self, *, model: str, benchmark: str) -> dict[str, object]:
        return {
            "model": model,
            "benchmark": benchmark,
            "n": len(self.original.results),
            "shuffle_seed": self.mitigation.seed,
            "cut": self.original.config.cut,
            "original": self.original.to_dict(),
            "shuffled": self.shuffled.to_dict(),
            "mitigation": {kind: self.mitigation.drop(kind) for kind in PROBE_KINDS},
            "summary": [summary_row(model, benchmark, self.mitigation, kind) for kind in ("next_token", "completion")],
            "permutation": self.permutation.to_dict() if self.permutation else None,
            "questions": self.question_rows(),
        }


@dataclass(frozen=True)
class QuestionOutcome:
    """Everything measured for one question: its probes before and after shuffling, and its order scores."""

    original: QuestionResult
    shuffled: QuestionResult
    orders: QuestionOrders | None


def probe_questions(
    lm: ScoringModel,
    questions: Sequence[MCQuestion],
    shuffled_questions: Sequence[MCQuestion],
    config: MCQConfig,
    *,
    permutation: bool = False,
    progress: ProgressCallback | None = None,
) -> list[QuestionOutcome]:
    """Measure a batch of questions (any batch: every question's result depends on that question alone)."""
    require_capabilities(lm, "The multiple-choice probes", [GENERATION])
    if permutation:
        require_capabilities(lm, "The option-order test", [TARGET_LOGPROBS])
    n_probes = sum(len(q.options) for q in questions)
    n_orders = len(questions) * math.factorial(len(questions[0].options)) if permutation and questions else 0
    total = 2 * n_probes + n_orders
    original, shuffled = run_mcq_sets(
        lm, [questions, shuffled_questions], config, progress=offset_progress(progress, 0, total)
    )
    orders = (
        permutation_test(
            lm, questions, config.layout, progress=offset_progress(progress, 2 * n_probes, total)
        ).questions
        if permutation
        else (None,) * len(questions)
    )
    return [QuestionOutcome(o, s, r) for o, s, r in zip(original.results, shuffled.results, orders, strict=True)]


def assemble_report(
    questions: Sequence[MCQuestion],
    shuffled_questions: Sequence[MCQuestion],
    outcomes: Sequence[QuestionOutcome],
    config: MCQConfig,
    *,
    shuffle_seed: int,
) -> MCQReport:
    """The study's report from per-question outcomes (measured now or read back from the store)."""
    original = MCQRun(results=tuple(o.original for o in outcomes), config=config)
    shuffled = MCQRun(results=tuple(o.shuffled for o in outcomes), config=config)
    orders = [o.orders for o in outcomes]
    present = [o for o in orders if o is not None]
    permutation = None
    if orders and len(present) == len(orders):
        permutation = PermutationResult(questions=tuple(present), n_orders=len(present[0].logprobs))
    return MCQReport(
        mitigation=Mitigation(original=original, shuffled=shuffled, seed=shuffle_seed),
        shuffled_questions=tuple(shuffled_questions),
        permutation=permutation,
    )
