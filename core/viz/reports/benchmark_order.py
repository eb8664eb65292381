"""The benchmark-order test's report and CSV: its section (each shard's published order against its shuffles,
then a table of every shard), the report's title and intro, and the per-shard download (``order_csv``), each row
led by the verdict, the model and the benchmark."""

from __future__ import annotations

from typing import Any

from core.benchmark_order.run import OrderTest
from core.data.demo import dataset_label
from core.stats.finding import Finding
from core.viz.benchmark_order_plots import order_chart
from core.viz.csv_export import result_csv
from core.viz.reports.shell import CsvFile, ReportSection, render_report, stored_as, table

TITLE = "LeakLens benchmark-order report"
INTRO = (
    "The benchmark's examples are split into shards of consecutive examples; in each shard the log-likelihood of "
    "the published order is compared with that of shuffled orders. A model that never read the file has no reason "
    "to prefer its order, so the published order then sits among its shuffles; one that trained on the file in "
    "its order finds it likelier, shard after shard (one-sided t-test over shards)."
)


def order_shard_rows(test: OrderTest) -> list[dict[str, Any]]:
    """One row per shard: its examples, the published order's log-likelihood and its shuffles', the advantage and
    the shard's own permutation p-value (the CSV export and the report's table)."""
    return [shard.to_dict() for shard in test.result.shards]


def order_csv(test: OrderTest, finding: Finding, data: str) -> CsvFile:
    """Each shard's published order against its shuffles."""
    return CsvFile(
        "Published order vs shuffles per shard (CSV)",
        "leaklens_benchmark_order.csv",
        result_csv(order_shard_rows(test), finding=finding, model=test.model, data=data),
    )


def _order_table(test: OrderTest) -> str:
    rows = [
        (
            (
                str(row["shard"] + 1),
                f"{row['first_example']}–{row['last_example']}",
                f"{row['canonical_logprob']:.2f}",
                f"{row['shuffled_mean_logprob']:.2f}",
                f"{row['difference']:+.3f}",
                f"{row['n_shuffled']}{' (all)' if row['exhaustive'] else ''}",
                f"{row['p_value']:.2g}",
            ),
            "",
        )
        for row in order_shard_rows(test)
    ]
    return table(
        (
            "shard",
            "examples",
            "published order (log-likelihood, nats)",
            "average shuffle",
            "advantage (nats)",
            "shuffles scored",
            "shard p-value",
        ),
        rows,
    )


def order_section(test: OrderTest) -> ReportSection:
    """The published order against its shuffles per shard (the evidence), then a table of every shard."""
    result = test.result
    details = ['<p class="label">Every shard</p>', _order_table(test)]
    if test.run_id:
        details.append(stored_as(test.run_id))
    return ReportSection(
        heading=f"Benchmark order · {dataset_label(test.benchmark)} · {test.model}",
        finding=test.finding,
        figures=(order_chart(test),),
        meta=(
            f"Benchmark-order test · {result.n_examples} examples in {len(result.shards)} shards · up to "
            f"{result.permutations} shuffles per shard (seed {result.seed}) · p = {result.p_value:.2g} · text "
            f"template: {test.template}"
        ),
        details="".join(details),
    )


def order_report(test: OrderTest, *, title: str = TITLE) -> str:
    """The self-contained report of one benchmark-order run."""
    return render_report([order_section(test)], title=title, intro=INTRO)
