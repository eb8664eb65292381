"""AppTest of the Dataset inference page: a real run of the tiny model on the WikiMIA sample's two halves."""

from __future__ import annotations

import html

import pytest

from core.data.labelled import SHARED_DATA_DIR
from core.dataset_inference.run import KIND, QUICK_METHOD_KEYS, estimated_seconds
from core.methods import default_methods
from core.store.results import ResultStore
from core.store.runloop import progress_batch_size
from tests.helpers.inference import quick_methods
from tests.ui.helpers import stale_notes

PAGE = "6_Dataset_inference.py"
WIKIMIA = SHARED_DATA_DIR / "wikimia_length128.parquet"


@pytest.mark.slow
def test_a_date_split_is_confounded_and_the_page_leads_with_it(store_path, open_page):
    app = open_page(PAGE)
    for role in ("suspect", "validation"):  # the WikiMIA sample beside the checkout, by its path
        app.radio(key=f"di_{role}_source").set_value("Local path").run()
        app.text_input(key=f"di_{role}_path").input(str(WIKIMIA)).run()
    assert app.text_input(key="di_suspect_where").value == "label=1"
    assert app.text_input(key="di_validation_where").value == "label=0"
    app.number_input(key="di_limit").set_value(40)
    app.number_input(key="di_splits").set_value(4)
    app.multiselect(key="di_methods").set_value(["loss", "zlib"])
    app.button(key="di_run").click().run()
    assert not app.exception, app.exception
    banners = [m.value for m in app.markdown if 'class="leaklens-finding"' in m.value]
    assert len(banners) == 1
    assert "CONFOUNDED" in banners[0].upper()
    assert html.escape("wording alone separates") in banners[0]
    metrics = {m.label: m.value for m in app.metric}
    assert metrics["Texts"] == "40 + 40"
    assert float(metrics["Wording alone (blind AUROC)"]) > 0.5
    charts = [c.proto.id for c in app.get("plotly_chart")]
    assert len(charts) == 3
    assert [b.label for b in app.get("download_button")] == [
        "Report (HTML)",
        "Test result (CSV)",
        "Each detector's AUROC (CSV)",
        "Per-text scores (CSV)",
        "Result (JSON)",
    ]
    (run,) = ResultStore(store_path).list_runs(KIND)
    assert run.finished
    assert run.meta["suspect"] == "wikimia_length128.parquet (label=1)"

    # another setting marks the result as out of date instead of passing it off as current
    app.number_input(key="di_splits").set_value(6).run()
    assert stale_notes(app)


def test_a_bad_row_filter_is_one_clear_error(store_path, open_page):
    app = open_page(PAGE)
    app.text_input(key="di_suspect_where").set_value("label").run()
    app.button(key="di_run").click().run()
    assert not app.exception, app.exception
    assert any("COLUMN=VALUE" in e.value for e in app.error)


def test_the_ready_example_is_the_shipped_demo_with_the_quick_detectors_and_the_full_set_one_click_away(
    store_path, open_page
):
    """README tour step 6 keeps the ready example: the shipped demo's famous passages against fresh ones, scored
    by the four one-pass detectors (the tour's five minutes); the full set is offered with its expected time."""
    app = open_page(PAGE)
    assert app.selectbox(key="di_suspect_example").value == "Famous vs fresh passages (demo)"
    assert app.selectbox(key="di_validation_example").value == "Famous vs fresh passages (demo)"
    assert app.multiselect(key="di_methods").value == list(QUICK_METHOD_KEYS)
    # The tour's five minutes with room to spare on the project's 2-core CPU; the bar moves every two texts.
    assert estimated_seconds(128, quick_methods()) <= 180
    assert progress_batch_size(128) == 2
    assert estimated_seconds(128) > 4 * estimated_seconds(128, quick_methods())
    (estimate,) = [c.value for c in app.caption if c.value.startswith("64 suspect + 64 validation texts.")]
    assert "with these 4 detectors: about" in estimate
    assert "with all 16 detectors: about" in estimate
    app.button(key="di_full_set").click().run()
    assert app.multiselect(key="di_methods").value == [m.key for m in default_methods()]
    assert not [b for b in app.button if b.key == "di_full_set"]

    app.number_input(key="di_limit").set_value(12)
    app.multiselect(key="di_methods").set_value(["loss", "zlib"])
    app.button(key="di_run").click().run()
    assert not app.exception, app.exception
    assert [s.value for s in app.subheader][0] == (
        "The famous passages (demo) vs the freshly written passages (demo) · tiny-random"
    )
    banners = [m.value for m in app.markdown if 'class="leaklens-finding"' in m.value]
    assert len(banners) == 1
    assert "the famous passages (demo)" in banners[0]
