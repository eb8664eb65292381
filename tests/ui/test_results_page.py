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
PAGE = str(REPO / "pages" / "7_Results.py")
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


def _table(app: AppTest, column: str):
    """The one table with this column (dataframes without selection carry no key in AppTest)."""
    tables = [d.value for d in app.dataframe if column in d.value.columns]
    assert len(tables) == 1, [list(d.value.columns) for d in app.dataframe]
    return tables[0]


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


@pytest.fixture(scope="module")
def mixed_store(tmp_path_factory, tiny_lm) -> Path:
    """A finished MCQ run, an MCQ run stored without its options (older format) and a model's loss-delta sets."""
    from core.data.questions import load_mcq
    from core.mcq.completion import MCQConfig
    from core.mcq.stored import run_stored_benchmark

    path = tmp_path_factory.mktemp("mixed") / "results.sqlite"
    store = ResultStore(path)
    questions = load_mcq(str(DATA / "mmlu_sample.jsonl"), limit=3).questions
    run_stored_benchmark(questions, MCQConfig(), load=lambda: tiny_lm, store=store, model="tiny-random",
                         benchmark="mmlu_sample", shuffle_seed=1, permutation=True)
    old = store.get_or_create_run("mcq", {"old": 1}, {"dataset": "old_mcq", "model": "tiny-random", "n_total": 1})
    store.add_samples(old.run_id, [SampleRow("0", None, {"completion": 0.0}, {"question": "Q?", "answer": "A"})])
    store.finish_run(old.run_id, {})
    for name, role, losses in (("HumanEval", "test", [1.0, 2.0]), ("reference", "reference", [3.0, 5.0])):
        run = store.get_or_create_run("delta", {"model": "tiny-random", "problems": name},
                                      {"dataset": name, "model": "tiny-random", "role": role, "n_total": 2})
        store.add_samples(run.run_id, [SampleRow(str(i), None, {"solution_loss": x}) for i, x in enumerate(losses)])
        store.finish_run(run.run_id, {"mean_loss": sum(losses) / 2, "n": 2})
    return path


def test_an_mcq_run_opens_from_the_store_with_its_finding_and_charts(mixed_store, monkeypatch):
    from core.mcq.finding import mcq_finding
    from core.mcq.stored import mcq_report_from_run

    app = _page(mixed_store, monkeypatch)
    runs = app.dataframe[0].value
    assert len(runs) == 3 and "run id" not in runs.columns  # two loss-delta sets of one model: one row
    assert list(runs[runs["kind"] == "delta"]["dataset"]) == ["HumanEval vs reference"]
    assert any("No finished membership benchmark run" in i.value for i in app.info)

    app.radio(key="results_view").set_value("mcq").run()
    assert not app.exception, app.exception
    store = ResultStore(mixed_store)
    choice = app.selectbox(key="results_mcq_run")
    finished = [r for r in store.list_runs("mcq") if r.finished]
    run = finished[choice.value]
    if run.dataset != "mmlu_sample":  # open the complete run whichever is listed first
        choice.set_value(1 - choice.value).run()
        run = finished[choice.value]
    report = mcq_report_from_run(store, run)
    banners = [m.value for m in app.markdown if 'class="leaklens-finding"' in m.value]
    assert len(banners) == 1 and html.escape(mcq_finding(report).headline) in banners[0]
    completion = _figure(app, "results_mcq_completion")["data"]
    assert completion[0]["y"] == list(report.original.summary("completion").distribution)
    _figure(app, "results_mcq_next")
    _figure(app, "results_mcq_ranks")  # the run had the option-order test
    export = app.multiselect(key="results_export_runs")
    assert len(export.value) == 1  # the run stored without its options cannot be exported
    html_button = [b for b in app.get("download_button") if b.proto.label.startswith("Report")][0]
    assert not html_button.proto.disabled  # MCQ runs alone can be exported
    assert [b.proto.disabled for b in app.get("download_button") if b.proto.label.startswith("AUROC")] == [True]

    # The run stored without its options says what to do instead of failing.
    choice.set_value(1 - choice.value).run()
    assert not app.exception, app.exception
    assert any("older LeakLens" in w.value and "again" in w.value for w in app.warning)


def test_loss_delta_runs_are_listed_per_model_with_a_note(mixed_store, monkeypatch):
    app = _page(mixed_store, monkeypatch)
    app.radio(key="results_view").set_value("delta").run()
    assert not app.exception, app.exception
    table = _table(app, "benchmark set")
    assert list(table["model"]) == ["tiny-random"] and list(table["benchmark set"]) == ["HumanEval"]
    assert list(table["benchmark mean loss"]) == [1.5] and list(table["reference mean loss"]) == [4.0]
    assert list(table["reference n"]) == [2]
    assert any("running the test again" in i.value for i in app.info)
    details = _table(app, "run id")
    assert set(details["run id"]) == {r.run_id for r in ResultStore(mixed_store).list_runs()}


def test_a_stored_loss_delta_comparison_opens_with_its_finding_and_exports(tmp_path, monkeypatch, tiny_lm):
    from core.data.problems import ProblemSet, builtin_problems
    from core.leakage.delta import ModelRequest
    from core.leakage.finding import leakage_finding
    from core.leakage.run import run_leakage_test

    path = tmp_path / "results.sqlite"
    test = builtin_problems(limit=6)
    ref = ProblemSet("fresh set", builtin_problems(limit=12).problems[6:], True)
    report = run_leakage_test(test, ref, [ModelRequest("tiny-random")], load=lambda _: tiny_lm,
                              store=ResultStore(path))
    app = _page(path, monkeypatch)
    app.radio(key="results_view").set_value("delta").run()
    assert not app.exception, app.exception
    assert app.selectbox(key="results_delta_run").options[0].startswith("LeakLens built-in reference vs fresh set")
    banners = [m.value for m in app.markdown if 'class="leaklens-finding"' in m.value]
    assert len(banners) == 1 and html.escape(leakage_finding(report).headline) in banners[0]
    bars = _figure(app, "results_delta_bars")["data"]
    assert bars and not app.info
    assert list(_table(app, "L_test")["Δ"]) == pytest.approx([report.models[0].stats.delta])
    export = app.multiselect(key="results_export_runs")
    assert export.options == ["Loss delta · " + app.selectbox(key="results_delta_run").options[0]]
    html_button = [b for b in app.get("download_button") if b.proto.label.startswith("Report")][0]
    assert not html_button.proto.disabled


def test_a_stored_dataset_inference_opens_with_its_finding_and_exports(tmp_path, monkeypatch, tiny_lm):
    from core.data.text_sets import load_text_set
    from core.inference.run import run_dataset_inference

    path = tmp_path / "results.sqlite"
    wikimia = str(DATA / "wikimia_length128.parquet")
    inference = run_dataset_inference(load_text_set(wikimia, where=("label", "1"), limit=20),
                                      load_text_set(wikimia, where=("label", "0"), limit=20), "tiny-random",
                                      parse_methods(["loss", "zlib"]), n_splits=3, store=ResultStore(path),
                                      load_model=lambda spec: tiny_lm)
    app = _page(path, monkeypatch)
    app.radio(key="results_view").set_value("dataset-inference").run()
    assert not app.exception, app.exception
    banners = [m.value for m in app.markdown if 'class="leaklens-finding"' in m.value]
    assert len(banners) == 1 and html.escape(inference.finding.headline) in banners[0]
    _figure(app, "results_inference_scores")
    _figure(app, "results_inference_weights")
    assert any(o.startswith("Dataset inference · ") for o in app.multiselect(key="results_export_runs").options)
