"""AppTest of the Loss-delta page: a real run on the tiny model into a temporary store."""

from __future__ import annotations

import json

import pytest

from core.data.problems import builtin_problems
from core.loss_delta.stored import KIND
from core.store.results import ResultStore
from tests.ui.helpers import computed_for, stale_notes
from ui.freshness import STALE_HEADLINE

PAGE = "3_Loss_delta.py"


def _loss_changes(app) -> list[str]:
    """The HTML of the page's loss-change tables."""
    return [h.proto.body for h in app.get("html") if "leaklens-loss-change" in h.proto.body]


def test_paired_run_with_base_model_shows_tables_and_charts(store_path, tmp_path, open_page):
    # A reference file sharing the built-in set's task ids, so the sets are paired.
    reference = tmp_path / "ref.jsonl"
    with reference.open("w") as handle:
        for p in builtin_problems(limit=4).problems:
            handle.write(json.dumps({"task_id": p.task_id, "prompt": p.prompt, "solution": p.solution + "\n"}) + "\n")
    app = open_page(PAGE)
    app.selectbox(key="ld_test_example").set_value("LeakLens built-in set").run()
    app.radio(key="ld_ref_source").set_value("Local path").run()
    app.text_input(key="ld_ref_path").input(str(reference)).run()
    app.number_input(key="ld_limit").set_value(4).run()
    assert any(m.value.startswith("Model: **tiny-random** (chosen in the sidebar") for m in app.caption)
    app.text_input(key="ld_base_0").input("tiny-random").run()
    app.button(key="ld_run").click().run()
    assert not app.exception, app.exception
    assert not app.error, [e.value for e in app.error]

    table = app.dataframe[0].value
    assert list(table["Model"]) == ["tiny-random"]
    assert table["Δ"].iloc[0] == pytest.approx(table["L_test"].iloc[0] - table["L_ref"].iloc[0])
    assert any("paired by task id" in c.value and "wilcoxon" in c.value for c in app.caption)
    delta2 = app.dataframe[1].value
    assert delta2["Δ²"].iloc[0] == pytest.approx(0.0)  # the model is its own base
    assert len(app.get("plotly_chart")) == 3  # L bars, Δ² bars, per-problem scatter
    # How fine-tuning moved each set's loss, side by side (the model is its own base: no change anywhere).
    (changes,) = _loss_changes(app)
    assert changes.count("<tr data-set=") == 2
    assert changes.count("+0.000 (+0.000 to +0.000)") == 2
    runs = ResultStore(store_path).list_runs(KIND)
    assert len(runs) == 2
    assert all(r.finished for r in runs)  # one model x two problem sets


def test_unpaired_run_and_bad_path_error(store_path, tmp_path, open_page):
    app = open_page(PAGE)
    app.selectbox(key="ld_test_example").set_value("LeakLens built-in set").run()
    app.radio(key="ld_ref_source").set_value("Local path").run()
    app.text_input(key="ld_ref_path").input(str(tmp_path / "nothing.jsonl")).run()
    app.button(key="ld_run").click().run()
    assert not app.exception, app.exception
    assert any("File not found" in e.value for e in app.error)

    app.radio(key="ld_ref_source").set_value("Ready example").run()
    app.selectbox(key="ld_ref_example").set_value("HumanEval (offline)").run()
    app.number_input(key="ld_limit").set_value(3).run()
    app.button(key="ld_run").click().run()
    assert not app.exception, app.exception
    assert not app.error, [e.value for e in app.error]
    assert any("unpaired" in c.value and "mann-whitney" in c.value for c in app.caption)
    assert len(app.get("plotly_chart")) == 2  # no base model: no Δ² chart
    assert _loss_changes(app) == []


def test_a_changed_set_or_size_marks_the_report_out_of_date(store_path, open_page):
    app = open_page(PAGE)
    app.selectbox(key="ld_test_example").set_value("LeakLens built-in set").run()
    app.number_input(key="ld_limit").set_value(3).run()
    app.button(key="ld_run").click().run()
    assert not app.exception, app.exception
    assert not app.error, [e.value for e in app.error]
    caption = computed_for(app)
    assert "test set `builtin" in caption
    assert "problems per set `3`" in caption
    assert "model `tiny-random`" in caption
    assert stale_notes(app) == []
    assert not app.get("multiselect")  # no list of models of its own: the sidebar's model is the tested one
    labels = [b.proto.label for b in app.get("download_button")]
    assert labels == ["Report (HTML)", "Loss delta per model (CSV)", "Per-problem losses (CSV)"]
    app.number_input(key="ld_threshold").set_value(-0.05).run()  # a display threshold: the same report
    assert stale_notes(app) == []
    app.selectbox(key="ld_ref_example").set_value("HumanEval (offline)").run()
    app.number_input(key="ld_limit").set_value(0).run()
    (note,) = stale_notes(app)
    assert note.startswith(
        f"**{STALE_HEADLINE}** The reference set and the problems per set changed since they "
        "were computed; press **Run loss-delta test**"
    ), note
    assert "- problems per set: `3` → now `all`" in note
    assert app.dataframe  # the old report stays, marked
    app.text_input(key="ld_base_0").input("tiny-random").run()
    assert "- base model: `none` → now `tiny-random`" in stale_notes(app)[0]
    app.sidebar.selectbox(key="model_picker").set_value("smollm2-135m").run()  # the one model of every page
    assert "- model: `tiny-random` → now `smollm2-135m`" in stale_notes(app)[0]
