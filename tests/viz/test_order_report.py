"""The benchmark-order test's chart, report section and CSV, and its registration as a stored kind: built from a
real run of the tiny model on the shipped multiple-choice demo, reopened from the store alone."""

from __future__ import annotations

import csv
import io
import json
from html import escape

import plotly.io as pio
import pytest

from core.benchmark_order.examples import render_examples
from core.benchmark_order.run import KIND, OrderTest, order_test_from_run, run_order_test
from core.benchmark_order.settings import OrderSettings
from core.data.tables import load_rows
from core.engine.handle import resolve_model
from core.results.kinds import kind_label, kind_of
from core.results.report import stored_runs_report
from core.results.stored import open_stored, run_card, stored_csv
from core.store.results import ResultStore, RunInfo
from core.viz.benchmark_order_plots import order_chart
from core.viz.csv_export import CONTEXT_COLUMNS
from core.viz.reports.benchmark_order import TITLE as ORDER_TITLE
from core.viz.reports.benchmark_order import order_csv, order_report, order_section
from core.viz.style import BACKGROUND, TEMPLATE
from tests.viz.test_report_kinds import PLANTED, check_escaped, check_self_contained, check_starts_with_verdict

SHARDS = 8


@pytest.fixture(scope="module")
def stored(tmp_path_factory, tiny_lm) -> tuple[ResultStore, OrderTest, RunInfo]:
    """A finished benchmark-order run on demo:mcq (24 examples, 8 shards of 3: every order of each shard), its
    template carrying a planted script tag."""
    store = ResultStore(tmp_path_factory.mktemp("order") / "results.sqlite")
    examples = render_examples(load_rows("demo:mcq"), f"{PLANTED} {{question}} {{answer}}")
    test = run_order_test(
        examples,
        OrderSettings(shards=SHARDS),
        model=resolve_model("tiny-random", loader=lambda _: tiny_lm),
        store=store,
    )
    run = store.get_run(test.run_id or "")
    assert run is not None and run.finished
    return store, test, run


def test_the_chart_sets_each_shards_published_order_against_its_shuffles(stored):
    _, test, _ = stored
    figure = order_chart(test)
    spec = json.loads(figure.to_json())
    line, shuffled, published = spec["data"]
    shards = test.result.shards
    assert shuffled["type"] == "box"
    assert published["y"] == pytest.approx([s.difference for s in shards])
    assert published["x"] == list(range(1, SHARDS + 1))
    # the shuffles centred on their own mean: the box is the spread a published order would sit in by chance
    centred = [v - s.shuffled_mean for s in shards for v in s.shuffled]
    assert shuffled["y"] == pytest.approx(centred)
    assert len(shuffled["y"]) == SHARDS * 5
    assert f"examples {shards[1].start + 1}–{shards[1].stop}" in published["text"][1]
    layout = spec["layout"]
    assert f"likelier in {test.result.canonical_first} of {SHARDS} shards" in layout["title"]["text"]
    assert "than the" in layout["yaxis"]["title"]["text"] and "nats" not in layout["yaxis"]["title"]["text"]
    # the dashed zero line, labelled in the legend, spans exactly the shards (no shard 0 or n + 1 on the axis)
    assert line["y"] == [0, 0]
    assert line["x"] == layout["xaxis"]["range"] == [0.5, SHARDS + 0.5]
    assert line["line"]["dash"] == "dash"
    # colours and template named here, so the chart reads the same outside the app's theme
    assert layout["paper_bgcolor"] == BACKGROUND
    assert layout["plot_bgcolor"] == BACKGROUND
    assert figure.layout.template == pio.templates[TEMPLATE]
    assert shuffled["fillcolor"].startswith("#")
    assert published["marker"]["color"].startswith("#")
    assert [t["name"] for t in spec["data"]] == [
        "no preference",
        "shuffled orders (spread)",
        "published order",
    ]


def test_the_report_opens_with_the_verdict_then_the_chart_and_every_shard(stored):
    _, test, _ = stored
    html = order_report(test)
    body = check_self_contained(html)
    check_starts_with_verdict(body, [test.finding])
    check_escaped(body)
    assert f"<h1>{ORDER_TITLE}</h1>" in body
    assert body.count('class="plotly-graph-div"') == 1
    section = order_section(test)
    assert section.heading == "Benchmark order · General-knowledge questions (demo) · tiny-random"
    assert f"text template: {test.template}" in section.meta  # escaped when rendered
    assert escape(f"text template: {test.template}") in body
    assert section.details.count("<tr>") == 1 + SHARDS  # header and one row per shard
    assert f"Stored as run {test.run_id}" in section.details


def test_the_csv_has_one_row_per_shard_led_by_the_verdict(stored):
    _, test, _ = stored
    export = order_csv(test, test.finding, "General-knowledge questions (demo)")
    rows = list(csv.DictReader(io.StringIO(export.text)))
    assert len(rows) == SHARDS
    assert list(rows[0])[: len(CONTEXT_COLUMNS)] == list(CONTEXT_COLUMNS)
    assert {r["verdict"] for r in rows} == {test.finding.level}
    assert [int(r["first_example"]) for r in rows] == [s.start + 1 for s in test.result.shards]
    assert [float(r["difference"]) for r in rows] == pytest.approx([s.difference for s in test.result.shards])
    assert export.file_name.endswith(".csv")


def test_a_stored_run_reopens_as_its_kind_registers_it(stored):
    store, test, run = stored
    assert kind_label(KIND) == "Benchmark order test"
    opened = open_stored(store, run)
    assert opened.finding == test.finding
    assert opened.result == order_test_from_run(store, run)
    assert kind_of(KIND).figure is not None
    card = run_card(run, opened)
    assert card.test == "Benchmark order test"
    assert card.finding == test.finding
    export = stored_csv(opened)
    assert export.text.count("\n") == 1 + SHARDS
    html = stored_runs_report(store, [run])
    assert f"<h1>{ORDER_TITLE}</h1>" in html
    assert escape(test.finding.headline) in html
