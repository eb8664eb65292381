"""Streamlit pieces of the Benchmark order test page: the cached benchmark reader, the text-template and shard
fields that follow the chosen data, and the result, verdict first, then the downloads and (in ``details``) the
numbers behind it.

The test and its verdict come from ``core.benchmark_order``, the chart from ``core.viz.benchmark_order_plots``,
the report and CSV from ``core.viz.reports.benchmark_order``; this module only arranges them.
"""

from __future__ import annotations

import json
import math
from typing import NamedTuple

import streamlit as st

from core.benchmark_order.examples import BenchmarkExamples, default_template
from core.benchmark_order.run import MIN_EXAMPLES_PER_SHARD, OrderTest
from core.benchmark_order.settings import DEFAULT_PERMUTATIONS, DEFAULT_SHARDS
from core.benchmark_order.sizing import SUGGESTED_EXAMPLES_PER_SHARD, most_shards, suggested_shards
from core.benchmark_order.statistic import shards_needed
from core.data.demo import dataset_label, demo_sample_note
from core.data.tables import Table, load_table
from core.errors import DataError
from core.results.stored import StoredResult
from core.viz.benchmark_order_plots import order_chart
from core.viz.loss_delta_plots import short_model_name
from core.viz.reports.benchmark_order import order_csv, order_report, order_shard_rows
from ui.dataset_picker import DatasetChoice, load_choice
from ui.finding import finding_banner
from ui.layout import controls, details
from ui.results import more_details
from ui.share import share_link

TEMPLATE_KEY = "bo_template"
SHARDS_KEY = "bo_shards"
WHAT_IT_SHOWS = (
    "**What this shows.** Each diamond is one run of consecutive examples from the file: how much more likely the "
    "model finds them in the order the file publishes than shuffled (the box: the shuffles themselves). A model "
    "that never read the file has no reason to prefer the published order, so its diamonds sit around the "
    "dashed line; diamonds above the boxes, shard after shard, mean the model learnt the file in its order."
)


class OrderRun(NamedTuple):
    """What the page keeps of the last run between reruns."""

    test: OrderTest
    skipped: str
    """Rows left out of the examples (no value for a field of the template), in words; empty when none."""


@st.cache_data(show_spinner="Reading the benchmark…", max_entries=16)
def load_benchmark(choice: DatasetChoice, limit: int | None) -> Table:
    """The picked benchmark's rows in the file's order (the first ``limit``), read once per choice."""
    return load_choice(load_table, choice, limit=limit)


def _follow(key: str, marker: str, value: object, fill: object) -> None:
    """Set the widget ``key`` to ``fill`` whenever ``value`` (what its default depends on) changes."""
    if st.session_state.get(marker) != value:
        st.session_state[marker] = value
        st.session_state[key] = fill


def template_field(table: Table | None) -> str:
    """The text-template field, filled with the data's default template (every column but a row id) whenever the
    chosen data's columns change; a template typed for the same columns stays."""
    if table is not None:
        try:
            default = default_template(table.columns)
        except DataError:  # no column a template could default to: the field stays for one to be typed
            default = ""
        _follow(TEMPLATE_KEY, f"{TEMPLATE_KEY}_columns", tuple(table.columns), default)
    return st.text_input(
        "Text template: how one example reads",
        key=TEMPLATE_KEY,
        placeholder="every column but a row id, joined by spaces",
        help="Column names in braces, e.g. {question} {A} {B} {C} {D} {answer}. Each example is rendered this "
        "way and the examples follow each other in the file's order, a blank line apart.",
    ).strip()


def shard_fields(n_examples: int | None) -> tuple[int, int]:
    """Shards and shuffled orders per shard. The shard count follows the data: set to what it fills well whenever
    the number of examples changes, capped at the most it can fill, and the caption says why."""
    left, right = st.columns(2)
    most = None if n_examples is None else max(2, most_shards(n_examples))  # None: a hub dataset, read at Run
    _follow(
        SHARDS_KEY,
        f"{SHARDS_KEY}_examples",
        n_examples,
        DEFAULT_SHARDS if n_examples is None else max(2, suggested_shards(n_examples)),
    )
    if most is not None:
        st.session_state[SHARDS_KEY] = min(int(st.session_state[SHARDS_KEY]), most)
    shards = left.number_input("Shards", min_value=2, max_value=most, key=SHARDS_KEY)
    permutations = right.number_input(
        "Shuffles per shard",
        min_value=1,
        max_value=10_000,
        value=DEFAULT_PERMUTATIONS,
        key="bo_permutations",
        help="Shuffled orders scored per shard; a shard with fewer orders in all is scored in every order.",
    )
    if n_examples is not None:
        st.caption(shards_caption(n_examples, int(shards)))
    return int(shards), int(permutations)


def shards_caption(n_examples: int, shards: int) -> str:
    """What the chosen shard count means for this benchmark, and why the suggestion is what it is."""
    size, extra = divmod(n_examples, shards) if shards else (0, 0)
    sizes = f"{size}" if not extra else f"{size}–{size + 1}"
    parts = [f"{n_examples} examples in {shards} shards of {sizes} consecutive examples."]
    suggested = suggested_shards(n_examples)
    if suggested < DEFAULT_SHARDS:
        parts.append(
            f"Fewer than the usual {DEFAULT_SHARDS} shards: this benchmark fills at most {most_shards(n_examples)} "
            f"({MIN_EXAMPLES_PER_SHARD} examples each), and {SUGGESTED_EXAMPLES_PER_SHARD} or more per shard give "
            f"each shard at least {math.factorial(SUGGESTED_EXAMPLES_PER_SHARD) - 1} shuffles to compare with, so "
            f"{suggested} are suggested."
        )
    if shards < shards_needed():
        parts.append(f"Below {shards_needed()} shards the test cannot reach a verdict whatever the model.")
    return " ".join(parts)


def example_preview(examples: BenchmarkExamples) -> None:
    """The first example exactly as the model reads it, and what was left out."""
    st.caption(f"{len(examples)} examples. The first, as the model reads it:")
    if examples.texts:
        st.code(examples.texts[0].rstrip("\n"), language=None, wrap_lines=True)
    if examples.skipped:
        st.caption(examples.skipped_summary())


def show_order_test(shown: OrderRun) -> None:
    """The verdict, the chart that carries it and what it shows, the downloads, then the numbers behind it."""
    test = shown.test
    st.subheader(f"{dataset_label(test.benchmark)} · {short_model_name(test.model)}")
    finding_banner(test.finding)
    small = demo_sample_note(test.benchmark, test.finding.level, "questions")
    if small:
        st.info(small, icon=":material/science:")
    st.plotly_chart(order_chart(test), width="stretch", key="bo_chart")
    st.markdown(WHAT_IT_SHOWS)
    for caveat in test.finding.caveats:
        st.caption(caveat)
    with controls("bo_downloads"):
        csv = order_csv(test, test.finding, dataset_label(test.benchmark))
        cols = st.columns(3)
        cols[0].download_button(
            "Report (HTML)",
            lambda: order_report(test),
            "leaklens_benchmark_order.html",
            "text/html",
            key="bo_html",
            on_click="ignore",
            icon=":material/description:",
            help="One self-contained file: the verdict, the chart and every shard's numbers.",
        )
        cols[1].download_button(
            csv.label, csv.text, csv.file_name, "text/csv", key="bo_csv", on_click="ignore", icon=":material/download:"
        )
        cols[2].download_button(
            "Result (JSON)",
            json.dumps(test.to_dict(), indent=2, default=str),
            "benchmark_order.json",
            "application/json",
            key="bo_json",
            on_click="ignore",
            icon=":material/download:",
        )
    if test.run_id:
        share_link(test.run_id, "bo")
    with details("bo_numbers"):
        show_numbers(test, shown.skipped, key="bo")


def show_numbers(test: OrderTest, skipped: str = "", *, key: str) -> None:
    """The test's numbers, the template the examples were rendered with and every shard (the page and Results)."""
    result = test.result
    cols = st.columns(4)
    cols[0].metric(
        "p-value",
        f"{result.p_value:.2g}",
        help="One-sided t-test over the shards' differences: how often a preference this consistent would turn "
        "up by chance if the model had no reason to prefer the published order.",
    )
    cols[1].metric(
        "Shards preferring the published order",
        f"{result.canonical_first} of {len(result.shards)}",
        help="Shards whose published order is likelier than the average of its shuffles; about half without a "
        "preference.",
    )
    cols[2].metric(
        "Advantage per shard",
        f"{result.mean_difference:+.2f} nats",
        help="The published order's log-likelihood minus its shuffles' average, averaged over shards.",
    )
    cols[3].metric("Examples", f"{result.n_examples}", help="Examples rendered from the file, in its order.")
    st.caption(f"Text template: `{test.template}`" + (f" · {skipped}" if skipped else ""))
    st.dataframe(
        [
            {
                "shard": row["shard"] + 1,
                "examples": f"{row['first_example']}–{row['last_example']}",
                "published order (nats)": row["canonical_logprob"],
                "average shuffle (nats)": row["shuffled_mean_logprob"],
                "advantage (nats)": row["difference"],
                "shuffles scored": row["n_shuffled"],
                "shard p-value": row["p_value"],
            }
            for row in order_shard_rows(test)
        ],
        hide_index=True,
        width="stretch",
        key=f"{key}_shards",
        column_config={
            "published order (nats)": st.column_config.NumberColumn(format="%.2f"),
            "average shuffle (nats)": st.column_config.NumberColumn(format="%.2f"),
            "advantage (nats)": st.column_config.NumberColumn(format="%+.3f"),
            "shard p-value": st.column_config.NumberColumn(format="%.2g"),
        },
    )


def results_more(stored: StoredResult) -> None:
    """The Results page's folded tables and further charts of a stored run of this test."""
    test = stored.result
    with more_details("order"):
        result = test.result
        st.caption(
            f"Benchmark-order test · {result.n_examples} examples in {len(result.shards)} shards · up to "
            f"{result.permutations} shuffles per shard (seed {result.seed})"
        )
        show_numbers(test, key="results_order")
