"""A Δ² driven by the reference set is a style shift, not leakage: the ``confounded`` rule of the loss-delta
finding, on hand-built reports and on a model fine-tuned on purpose.

Measured case behind the rule: a model fine-tuned on half of HumanEval, scored on the untrained half against
the built-in reference set, read ``weak`` (Δ² −0.159, 95% CI −0.247 to −0.080) while fine-tuning had *raised*
the untrained half's loss (+0.048) and the reference set's far more (+0.206).
"""

from __future__ import annotations

import numpy as np
import pytest

from core.data.problems import CodeProblem, ProblemSet
from core.engine.handle import resolve_model
from core.engine.models import wrap_model
from core.loss_delta.delta import (
    DeltaStats,
    FlaggedProblem,
    LeakageReport,
    LossChange,
    ModelDelta,
    ModelRequest,
    build_leakage_report,
    pair_sets,
)
from core.loss_delta.finding import STYLE_SHIFT, leakage_finding, model_finding
from core.loss_delta.losses import ModelLosses, ProblemLoss
from core.loss_delta.run import run_leakage_test
from core.stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED
from core.stats.finding import EXPOSURE_LEVELS
from tests.helpers.style_shift import style_shift

N = 40
DELTA2_CI = (-0.247, -0.080)
"""The measured case's Δ² interval: below 0 and above −0.1, so Δ² alone grades it ``weak``."""
REF_RISE = LossChange(1.200, 1.406, (0.150, 0.260))


def _stats(l_test: float, l_ref: float, ci: tuple[float, float] = (-0.05, 0.05)) -> DeltaStats:
    return DeltaStats(l_test, l_ref, l_test - l_ref, ci, 0.01, "mann-whitney u", N, N)


def _row(test: LossChange | None, ref: LossChange | None = REF_RISE, *, model: str = "sft") -> ModelDelta:
    """A fine-tuned model whose Δ² is −0.158 with ``DELTA2_CI``; ``test`` says how its benchmark loss moved."""
    tuned_test = test.tuned if test else 1.248
    return ModelDelta(
        model,
        "base",
        _stats(tuned_test, tuned_test + 0.158, (-0.30, -0.02)),
        _stats(1.2, 1.2),
        DELTA2_CI,
        test,
        ref,
    )


def _report(*rows: ModelDelta) -> LeakageReport:
    return LeakageReport("HumanEval", "LeakLens built-in", False, rows, (), ())


def test_a_benchmark_whose_loss_fell_keeps_its_level():
    fell = model_finding(_report(), _row(LossChange(1.200, 1.150, (-0.080, -0.020))))
    no_changes = model_finding(_report(), _row(None, None))
    assert fell.level == no_changes.level == "weak"
    assert fell.headline == no_changes.headline
    assert STYLE_SHIFT not in fell.caveats
    # The evidence still shows how each set moved, with its interval.
    assert "moved the test loss by -0.050 (95% interval -0.080 to -0.020)" in fell.evidence[1]
    assert "the reference loss by +0.206 (95% interval +0.150 to +0.260)" in fell.evidence[1]


def test_a_benchmark_loss_interval_including_zero_is_confounded_with_both_changes_in_the_headline():
    finding = model_finding(_report(), _row(LossChange(1.200, 1.212, (-0.020, 0.040))))
    assert finding.level == "confounded"
    assert finding.headline.startswith("Not a fair test: fine-tuning did not make HumanEval easier for sft ")
    assert "(+0.012 per token, likely between -0.020 and +0.040)" in finding.headline
    assert "made the reference set harder (+0.206 per token, likely between +0.150 and +0.260)" in finding.headline
    assert "not a sign of leakage" in finding.headline
    assert "Δ² -0.158 nats per token (95% interval -0.247 to -0.080)" in finding.numbers
    assert "benchmark loss 1.200 base → 1.212 fine-tuned, +0.012 (95% interval -0.020 to +0.040)" in finding.numbers
    assert "reference loss 1.200 → 1.406, +0.206 (95% interval +0.150 to +0.260)" in finding.numbers
    assert STYLE_SHIFT in finding.caveats


def test_a_benchmark_loss_that_rose_is_confounded():
    finding = model_finding(_report(), _row(LossChange(1.200, 1.248, (0.010, 0.090))))
    assert finding.level == "confounded"
    assert "made HumanEval harder for sft, not easier (+0.048 per token, likely between +0.010 and +0.090)" in (
        finding.headline
    )
    assert "the reference set harder still (+0.206 per token" in finding.headline


def test_the_rule_reads_the_upper_end_of_the_benchmark_interval():
    just_below = model_finding(_report(), _row(LossChange(1.2, 1.19, (-0.02, -0.0001))))
    at_zero = model_finding(_report(), _row(LossChange(1.2, 1.19, (-0.02, 0.0))))
    assert (just_below.level, at_zero.level) == ("weak", "confounded")


def test_only_an_exposure_level_from_delta2_can_become_confounded():
    rose = LossChange(1.2, 1.3, (0.05, 0.15))
    no_effect = ModelDelta("sft", "base", _stats(1.3, 1.3), _stats(1.2, 1.2), (-0.03, 0.03), rose, rose)
    assert model_finding(_report(), no_effect).level == "none"
    four = DeltaStats(1.3, 1.5, -0.2, (-0.3, -0.1), 0.1, "mann-whitney u", 4, 4)
    too_few = ModelDelta("sft", "base", four, _stats(1.2, 1.2), DELTA2_CI, rose, REF_RISE)
    assert model_finding(_report(), too_few).level == "inconclusive"


def _length_flags(count: int) -> tuple[FlaggedProblem, ...]:
    return tuple(FlaggedProblem(f"r/{i}", ("solution length 160% of the test solution's",), 1.6) for i in range(count))


@pytest.mark.parametrize(("flagged", "level"), [(N, "confounded"), (N // 2, "confounded"), (N // 2 - 1, "weak")])
def test_a_delta_against_reference_solutions_of_another_length_is_confounded(flagged, level):
    """Per-token loss falls along a solution, so a reference set of far longer or shorter solutions differs in
    loss for that reason alone: at least half of it flagged for length makes a Δ below zero ``confounded``."""
    plain = ModelDelta("random", None, _stats(1.30, 1.35, (-0.09, -0.01)))
    report = LeakageReport("HumanEval", "ref.jsonl", True, (plain,), (), _length_flags(flagged))
    finding = model_finding(report, plain)
    assert finding.level == level
    if level == "confounded":
        assert finding.headline == (
            f"Not a fair test: {flagged} of {N} reference solutions are more than 30% longer or shorter than their "
            "HumanEval pairs, so the loss gap can come from length alone; use a reference set whose solutions "
            "match the benchmark's in length."
        )


def test_flags_for_low_delta_alone_do_not_make_a_delta_confounded():
    plain = ModelDelta("random", None, _stats(1.30, 1.35, (-0.09, -0.01)))
    low = tuple(FlaggedProblem(f"r/{i}", ("90% of models have per-problem Δ < -0.2",), None, 0.9) for i in range(N))
    assert model_finding(LeakageReport("HumanEval", "ref.jsonl", True, (plain,), (), low), plain).level == "weak"


@pytest.mark.parametrize(
    ("other", "chosen"),
    [
        (_row(LossChange(1.2, 1.15, (-0.08, -0.02)), model="leaky"), "weak"),  # a real sign wins
        (ModelDelta("clean", None, _stats(1.2, 1.2, (-0.03, 0.03))), "confounded"),  # over none
        (ModelDelta("rough", None, _stats(1.2, 1.2, (-0.4, 0.2))), "confounded"),  # over inconclusive
    ],
)
def test_the_run_reports_confounded_after_exposure_and_before_the_rest(other, chosen):
    confounded = _row(LossChange(1.2, 1.248, (0.01, 0.09)))
    for rows in ((confounded, other), (other, confounded)):
        assert leakage_finding(_report(*rows)).level == chosen


# ------------------------------------------------------------------------------- the changes in the report


def _set(prefix: str, n: int) -> ProblemSet:
    return ProblemSet(
        prefix, tuple(CodeProblem(f"{prefix}/{i}", f"def f{i}():\n", "    return 1\n") for i in range(n)), True
    )


def _losses(model: str, test: list[float], ref: list[float]) -> ModelLosses:
    return ModelLosses(
        model,
        tuple(ProblemLoss(f"T/{i}", v, 10) for i, v in enumerate(test)),
        tuple(ProblemLoss(f"R/{i}", v, 10) for i, v in enumerate(ref)),
    )


def _slow_change(tuned: list[float], base: list[float]) -> tuple[float, float]:
    """Independent path: one resample at a time, the seed and count every interval uses."""
    rng = np.random.default_rng(DEFAULT_SEED)
    draws = rng.integers(0, len(tuned), size=(DEFAULT_RESAMPLES, len(tuned)))
    means = [float(np.mean([tuned[i] - base[i] for i in row])) for row in draws]
    lo, hi = np.quantile(means, [0.025, 0.975])
    return float(lo), float(hi)


def test_the_report_bootstraps_each_sets_change_problem_by_problem():
    base_test, tuned_test = [1.0, 1.5, 2.0, 2.5, 3.0, 3.5], [1.1, 1.4, 2.3, 2.5, 3.2, 3.4]
    base_ref, tuned_ref = [2.0, 2.2, 2.4, 2.6, 2.8], [2.3, 2.6, 2.6, 3.0, 3.1]  # unpaired: other ids, other size
    sets = pair_sets(_set("T", 6), _set("R", 5))
    losses = {"sft": _losses("sft", tuned_test, tuned_ref), "base": _losses("base", base_test, base_ref)}
    (row,) = build_leakage_report(sets, [ModelRequest("sft", "base")], losses).models
    assert row.test_change is not None and row.ref_change is not None
    assert row.test_change.base == pytest.approx(np.mean(base_test))
    assert row.test_change.tuned == pytest.approx(np.mean(tuned_test))
    assert row.test_change.ci == pytest.approx(_slow_change(tuned_test, base_test))
    assert row.ref_change.ci == pytest.approx(_slow_change(tuned_ref, base_ref))
    # Δ² is the benchmark's change minus the reference set's.
    assert row.delta2 == pytest.approx(row.test_change.change - row.ref_change.change)
    assert row.to_dict()["test_change"] == {
        "base": row.test_change.base,
        "tuned": row.test_change.tuned,
        "change": row.test_change.change,
        "ci": list(row.test_change.ci),
    }
    (plain,) = build_leakage_report(sets, [ModelRequest("sft")], losses).models
    assert (plain.test_change, plain.ref_change) == (None, None)


# --------------------------------------------------------------------------------------------- ground truth


@pytest.mark.slow
def test_fine_tuning_on_half_a_code_set_against_a_prose_reference_is_confounded(tiny_lm):
    """Ground truth (``tests.helpers.style_shift``): fine-tuned on half of a problem set, scored on the untrained
    half against prose. Δ² falls below zero only because the prose got harder; the benchmark's own change decides."""
    case = style_shift(tiny_lm.tokenizer, tiny_lm.start_token_id)
    models = {
        "tuned": wrap_model(case.tuned, tiny_lm.tokenizer, spec="tuned", start_token_id=tiny_lm.start_token_id),
        tiny_lm.spec: tiny_lm,
    }
    requests = [ModelRequest("tuned", tiny_lm.spec)]
    report = run_leakage_test(
        case.untrained, case.prose, requests, model=resolve_model("tuned", loader=models.__getitem__)
    )
    (row,) = report.models
    assert row.delta2 is not None and row.delta2_ci is not None
    assert row.test_change is not None and row.ref_change is not None
    # Δ² alone reads exposure ...
    assert row.delta2_ci[1] < 0
    alone = model_finding(report, ModelDelta(row.model, row.base_model, row.stats, row.base_stats, row.delta2_ci))
    assert alone.level in EXPOSURE_LEVELS
    # ... but the prose got far harder, and the untrained half did not get easier: its interval decides.
    assert row.ref_change.ci[0] > 0
    assert row.ref_change.change > row.test_change.change + 1.0
    assert row.test_change.ci[1] >= 0
    finding = leakage_finding(report)
    assert finding.level == "confounded", finding.headline
    assert f"{row.test_change.change:+.3f} per token" in finding.headline
    assert f"{row.ref_change.change:+.3f} per token" in finding.headline
