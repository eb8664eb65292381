"""Smoke runs of the MCQ, loss-delta and dtype benchmarks (``--quick``: tiny model, a few items): they run,
write their JSON, and the summary carries the names the docs and issue quote."""

from __future__ import annotations

import json

import pytest

from bench import delta, distribution_stats, dtype, mcq


@pytest.mark.parametrize(
    ("module", "prefix", "keys"),
    [
        (mcq, "mcq", {"speedup_vs_previous", "identical_results"}),
        (delta, "delta", {"fraction_of_forward_rate", "speedup_vs_previous", "max_abs_loss_difference"}),
        (dtype, "dtype", {"speedup_bf16_forward", "aurocs_agree_within_intervals", "recommend_bf16_default"}),
        (distribution_stats, "distribution_stats", {"speedup_vs_previous", "stats_time_per_forward_time"}),
    ],
)
@pytest.mark.slow
def test_quick_benchmark_writes_its_summary(module, prefix, keys, tmp_path):
    assert module.main(["--quick", "--out", str(tmp_path)]) == 0
    (path,) = tmp_path.glob(f"{prefix}-*.json")
    summary = json.loads(path.read_text())["summary"]
    assert keys <= set(summary)
    if prefix == "mcq":
        assert summary["identical_results"] is True
    if prefix == "delta":
        assert summary["max_abs_loss_difference"] < 1e-5
        assert summary["identical_token_counts"] is True
    if prefix == "distribution_stats":
        assert max(summary["max_abs_difference"].values()) < 1e-4
