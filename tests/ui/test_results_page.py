"""AppTest of the Results page over a temporary store holding real (tiny-model) runs."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.data.labelled import load_labelled_dataset
from core.membership.benchmark import run_membership_benchmark
from core.methods import parse_methods
from core.store.results import ResultStore, SampleRow

REPO = Path(__file__).resolve().parents[2]
PAGE = str(REPO / "pages" / "6_Results.py")
DATA = REPO / ".." / "shared" / "data"


@pytest.fixture(scope="module")
def filled_store(tmp_path_factory, tiny_lm) -> Path:
    """Two finished membership runs (WikiMIA, BookTection), one interrupted run and one of another kind."""
    path = tmp_path_factory.mktemp("results") / "results.sqlite"
    store = ResultStore(path)
    for name in ("wikimia_length128.parquet", "booktection_sample.csv"):
        dataset = load_labelled_dataset(str(DATA / name), limit=12)
        run_membership_benchmark(dataset, "tiny-random", parse_methods(["loss", "zlib"]), store=store,
                                 load_model=lambda spec: tiny_lm)
    broken = store.get_or_create_run("mia", {"dataset": "x", "model": "other-model"},
                                     {"dataset": "half.csv", "model": "other-model", "n_total": 4})
    store.add_samples(broken.run_id, [SampleRow("a", 1, {"loss": -1.0})])
    store.mark_interrupted(broken.run_id)
    store.get_or_create_run("mcq", {"q": 1}, {"dataset": "mmlu", "model": "tiny-random", "n_total": 3})
    return path


def _page(path: Path, monkeypatch) -> AppTest:
    monkeypatch.setenv("LEAKLENS_STORE", str(path))
    monkeypatch.setenv("LEAKLENS_DEFAULT_MODEL", "tiny-random")
    app = AppTest.from_file(PAGE, default_timeout=120)
    app.run()
    assert not app.exception, app.exception
    return app


def _figure(app: AppTest, key_part: str) -> dict:
    charts = [c for c in app.get("plotly_chart") if key_part in c.proto.id]
    assert charts, [c.proto.id for c in app.get("plotly_chart")]
    return json.loads(charts[0].proto.spec)


def test_results_page_shows_runs_heatmap_roc_and_exports(filled_store, monkeypatch):
    app = _page(filled_store, monkeypatch)
    runs = app.dataframe[0].value
    assert len(runs) == 4
    assert set(runs["status"]) == {"finished", "interrupted", "running"}
    assert set(runs["kind"]) == {"mia", "mcq"}

    store = ResultStore(filled_store)
    finished = {r.dataset: r for r in store.list_runs("mia") if r.finished}
    heatmap = _figure(app, "results_heatmap")["data"][0]
    assert sorted(heatmap["x"]) == ["booktection_sample.csv", "wikimia_length128.parquet"]
    column = heatmap["x"].index("wikimia_length128.parquet")
    loss_auroc = finished["wikimia_length128.parquet"].summary["methods"]["loss"]["auroc"]
    assert heatmap["z"][0][column] == pytest.approx(loss_auroc)
    assert heatmap["y"][-1].startswith("Blind baseline")
    roc = _figure(app, "results_roc")["data"]
    assert any(t["name"].startswith("Blind baseline") for t in roc)
    assert any(t["name"].startswith("Log-likelihood") for t in roc) and any(t["name"].startswith("zlib") for t in roc)
    labels = [b.label for b in app.get("download_button")]
    assert labels == ["AUROC table (CSV)", "Report (self-contained HTML)"]


def test_model_filter_and_empty_store(filled_store, monkeypatch, tmp_path):
    app = _page(filled_store, monkeypatch)
    app.multiselect(key="results_models").set_value(["other-model"]).run()
    assert not app.exception
    assert list(app.dataframe[0].value["model"]) == ["other-model"]
    assert any("No finished membership benchmark run" in i.value for i in app.info)

    empty = _page(tmp_path / "empty.sqlite", monkeypatch)
    assert any("No stored runs yet" in i.value for i in empty.info)


def test_deleting_a_run_needs_an_explicit_tick(filled_store, monkeypatch):
    app = _page(filled_store, monkeypatch)
    store = ResultStore(filled_store)
    before = {r.run_id for r in store.list_runs()}
    doomed = app.selectbox(key="results_delete_choice").value
    assert app.button(key="results_delete").disabled  # no delete without the tick
    app.checkbox(key="results_delete_sure").check().run()
    assert not app.button(key="results_delete").disabled
    app.button(key="results_delete").click().run()
    assert not app.exception, app.exception
    assert {r.run_id for r in store.list_runs()} == before - {doomed}


def test_selected_run_leads_with_its_finding_and_export_follows_the_chosen_runs(filled_store, monkeypatch):
    from core.membership.benchmark import latest_per_dataset, stored_results
    from core.membership.finding import membership_finding

    app = _page(filled_store, monkeypatch)
    results = latest_per_dataset(stored_results(ResultStore(filled_store)))
    chosen = results[app.selectbox(key="results_dataset").value]
    banners = [m.value for m in app.markdown if 'class="leaklens-finding"' in m.value]
    assert len(banners) == 1 and html.escape(membership_finding(chosen).headline) in banners[0]
    export = app.multiselect(key="results_export_runs")
    assert export.value == list(range(len(results)))  # every run by default
    assert not any(b.proto.disabled for b in app.get("download_button"))
    export.set_value([]).run()
    assert not app.exception, app.exception
    assert all(b.proto.disabled for b in app.get("download_button"))  # nothing chosen, nothing to export
