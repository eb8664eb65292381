"""AppTest of the Dataset inference page: a real run of the tiny model on the WikiMIA sample's two halves."""

from __future__ import annotations

import html

from core.inference.run import KIND
from core.store.results import ResultStore
from tests.ui.helpers import stale_notes

PAGE = "6_Dataset_inference.py"


def test_a_date_split_is_confounded_and_the_page_leads_with_it(store_path, open_page):
    app = open_page(PAGE)
    assert app.text_input(key="di_suspect_where").value == "label=1"
    assert app.text_input(key="di_validation_where").value == "label=0"
    app.number_input(key="di_limit").set_value(40)
    app.number_input(key="di_splits").set_value(4)
    app.multiselect(key="di_methods").set_value(["loss", "zlib"])
    app.button(key="di_run").click().run()
    assert not app.exception, app.exception
    banners = [m.value for m in app.markdown if 'class="leaklens-finding"' in m.value]
    assert len(banners) == 1 and "CONFOUNDED" in banners[0].upper()
    assert html.escape("wording alone separates") in banners[0]
    metrics = {m.label: m.value for m in app.metric}
    assert metrics["Texts"] == "40 + 40" and float(metrics["Wording alone (blind AUROC)"]) > 0.5
    charts = [c.proto.id for c in app.get("plotly_chart")]
    assert len(charts) == 3
    assert [b.label for b in app.get("download_button")] == ["Report (self-contained HTML)", "Result (JSON)"]
    (run,) = ResultStore(store_path).list_runs(KIND)
    assert run.finished and run.meta["suspect"] == "wikimia_length128.parquet (label=1)"

    # another setting marks the result as out of date instead of passing it off as current
    app.number_input(key="di_splits").set_value(6).run()
    assert stale_notes(app)


def test_a_bad_row_filter_is_one_clear_error(store_path, open_page):
    app = open_page(PAGE)
    app.text_input(key="di_suspect_where").set_value("label").run()
    app.button(key="di_run").click().run()
    assert not app.exception, app.exception
    assert any("COLUMN=VALUE" in e.value for e in app.error)
