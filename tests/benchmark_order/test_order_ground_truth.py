"""Ground truth: a model that trained on a benchmark file in its published order is caught; models that did not
are not, and over many benchmarks the untrained model is flagged no more often than the level allows.

The trained model is the tiny random Llama fine-tuned on 120 short MMLU-sample questions read as one running
text (tests/helpers/order_benchmark.py). Its shards of 4 are scored in all 24 orders.
"""

from __future__ import annotations

import pytest
from scipy import stats

from core.benchmark_order.examples import render_examples
from core.benchmark_order.run import run_order_test
from core.benchmark_order.settings import OrderSettings
from core.data.tables import load_rows
from core.engine.handle import resolve_model
from core.engine.models import load_model
from core.stats.finding import EXPOSURE_LEVELS
from core.store.results import ResultStore
from tests.helpers.order_benchmark import SHARDS, TEMPLATE, short_questions, write_benchmark

pytestmark = pytest.mark.slow

FPR_BENCHMARKS = 20
FPR_ROWS, FPR_SHARDS = 30, 10
LEVEL = 0.05


def _test(spec_or_lm, path, shards: int = SHARDS):
    examples = render_examples(load_rows(str(path)), TEMPLATE)
    lm = load_model(spec_or_lm) if isinstance(spec_or_lm, str) else spec_or_lm
    return run_order_test(
        examples,
        OrderSettings(shards=shards),
        model=resolve_model(lm.spec, loader=lambda _: lm),
        store=ResultStore(),
        batch_size=10,
    )


def test_a_model_trained_on_the_file_in_order_is_caught_and_others_are_not(order_tuned_runs, order_benchmarks):
    trained, unseen = order_benchmarks
    caught = order_tuned_runs[trained]  # the tuned model's runs, shared with the order page's browser test
    assert caught.result.p_value < 0.01, caught.to_dict()
    assert caught.finding.level == "strong"
    on_unseen = order_tuned_runs[unseen]
    assert on_unseen.result.p_value > 0.05, on_unseen.to_dict()
    assert on_unseen.finding.level in ("none", "inconclusive")
    untrained = _test("tiny-random", trained)
    assert untrained.result.p_value > 0.05, untrained.to_dict()
    assert untrained.finding.level in ("none", "inconclusive")


def test_the_untrained_model_is_flagged_no_more_often_than_the_level_allows(tiny_lm, tmp_path):
    """20 disjoint benchmarks of 30 questions (10 shards of 3). Without a preference each p-value falls below 0.05
    with probability at most 0.05: more than the binomial's 95th percentile of hits (3 of 20) would break it."""
    rows = short_questions()
    allowed = int(stats.binom.ppf(0.95, FPR_BENCHMARKS, LEVEL))
    p_values, levels = [], []
    for b in range(FPR_BENCHMARKS):
        path = write_benchmark(tmp_path / f"b{b}.jsonl", rows[b * FPR_ROWS : (b + 1) * FPR_ROWS])
        run = _test(tiny_lm, path, FPR_SHARDS)
        p_values.append(run.result.p_value)
        levels.append(run.finding.level)
    flagged = sum(p < LEVEL for p in p_values)
    assert allowed == 3
    assert flagged <= allowed, p_values
    assert len(set(p_values)) == FPR_BENCHMARKS  # 20 different benchmarks, not one scored 20 times
    # The levels' own rate (weak or more at most 2.5%): more than the binomial's 95th percentile (2 of 20) breaks it.
    read_as_evidence = [level for level in levels if level in EXPOSURE_LEVELS]
    assert len(read_as_evidence) <= int(stats.binom.ppf(0.95, FPR_BENCHMARKS, 0.025)), levels


def test_the_readmes_example_on_the_random_weight_model_reads_no_evidence(tiny_lm):
    """``order-test --model tiny-random --dataset demo:mcq --shards 8``: p 0.046, 95% interval -0.011 to +0.110."""
    examples = render_examples(load_rows("demo:mcq"))
    run = run_order_test(
        examples,
        OrderSettings(shards=8),
        model=resolve_model(tiny_lm.spec, loader=lambda _: tiny_lm),
        store=ResultStore(),
        batch_size=10,
    )
    assert run.finding.level not in EXPOSURE_LEVELS, run.finding.headline
