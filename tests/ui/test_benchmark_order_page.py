"""AppTest of the Benchmark order test page: a real run of the tiny model on the shipped multiple-choice demo leads
with its verdict and chart; the template and the shards follow the chosen data."""

from __future__ import annotations

import html
import json

from core.benchmark_order.examples import render_examples
from core.benchmark_order.run import KIND, order_test_from_run
from core.data.tables import load_rows
from core.store.results import ResultStore
from tests.ui.helpers import stale_notes

PAGE = "8_Benchmark_order.py"
DEMO_TEMPLATE = "{question} {A} {B} {C} {D} {answer}"


def _banners(app) -> list[str]:
    return [m.value for m in app.markdown if 'class="leaklens-finding"' in m.value]


def test_the_demo_runs_and_the_page_leads_with_the_verdict_and_the_chart(store_path, open_page):
    app = open_page(PAGE)
    assert app.title[0].value == "Benchmark order test"
    assert app.selectbox(key="bo_example").value == "General-knowledge questions (demo)"
    # the template is the data's default, and the first example is shown as the model reads it
    assert app.text_input(key="bo_template").value == DEMO_TEMPLATE
    first = render_examples(load_rows("demo:mcq")).texts[0]
    assert [c.value for c in app.code] == [first.rstrip("\n")]
    # 24 examples: 6 shards of 4 suggested (at most 12 of 2), and the caption says why
    assert app.number_input(key="bo_shards").value == 6
    assert app.number_input(key="bo_permutations").value == 250
    (sizes,) = [c.value for c in app.caption if c.value.startswith("24 examples in 6 shards of 4")]
    assert "at most 12" in sizes
    assert _banners(app) == []

    app.button(key="bo_run").click().run()
    assert not app.exception, app.exception
    assert app.session_state["setup"] is False  # folded under the result
    (run,) = ResultStore(store_path).list_runs(KIND)
    assert run.finished
    assert run.meta["template"] == DEMO_TEMPLATE
    test = order_test_from_run(ResultStore(store_path), run)
    (banner,) = _banners(app)
    assert f'data-level="{test.finding.level}"' in banner
    assert html.escape(test.finding.headline) in banner
    assert [s.value for s in app.subheader][0] == "General-knowledge questions (demo) · tiny-random"
    # the chart under the banner: every shard's published order against its shuffles, around "no preference"
    charts = app.get("plotly_chart")
    assert "bo_chart" in charts[0].proto.id
    spec = json.loads(charts[0].proto.spec)
    line, shuffled, published = spec["data"]
    assert published["y"] == [s.difference for s in test.result.shards]
    assert len(shuffled["y"]) == 6 * 23  # every other order of each 4-example shard
    assert line["name"].startswith("no preference") and line["y"] == [0, 0]
    assert any(m.value.startswith("**What this shows.**") for m in app.markdown)
    assert [b.label for b in app.get("download_button")] == [
        "Report (HTML)",
        "Published order vs shuffles per shard (CSV)",
        "Result (JSON)",
    ]
    metrics = {m.label: m.value for m in app.metric}
    assert metrics["Shards preferring the published order"] == f"{test.result.canonical_first} of 6"

    # another setting marks the result as out of date instead of passing it off as current
    app.number_input(key="bo_permutations").set_value(100).run()
    assert stale_notes(app)


def test_a_file_with_other_columns_refills_the_template_and_the_shards(store_path, open_page, tmp_path):
    rows = "".join(
        json.dumps({"id": i, "prompt": f"Item {i} asks a thing", "target": "yes"}) + "\n" for i in range(200)
    )
    path = tmp_path / "bench.jsonl"
    path.write_text(rows)
    app = open_page(PAGE)
    app.text_input(key="bo_template").input("{question} {answer}").run()  # typed for the demo's columns
    app.radio(key="bo_source").set_value("Local path").run()
    app.text_input(key="bo_path").input(str(path)).run()
    assert not app.exception, app.exception
    assert app.text_input(key="bo_template").value == "{prompt} {target}"  # the row id left out
    assert app.number_input(key="bo_shards").value == 50  # 200 examples fill the usual 50
    assert [c.value for c in app.code] == ["Item 0 asks a thing yes"]

    app.text_input(key="bo_template").input("{prompt} -> {missing}").run()
    assert not app.exception, app.exception
    assert any("missing" in e.value for e in app.error)
    assert app.button(key="bo_run").disabled
