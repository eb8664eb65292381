"""AppTest of the Results page over a temporary store holding real (tiny-model) runs: the most recent run opens
with its verdict, every finished run is a verdict card (a dataset inference's scores are not a second one)."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.config import SHARED_DATA_DIR
from core.data.labelled import load_labelled_dataset
from core.engine.handle import resolve_model
from core.membership.benchmark import run_membership_benchmark
from core.methods import parse_methods
from core.store.results import ResultStore, SampleRow

REPO = Path(__file__).resolve().parents[2]
PAGE = str(REPO / "pages" / "7_Results.py")
DATA = SHARED_DATA_DIR


@pytest.fixture(scope="module")
def filled_store(tmp_path_factory, tiny_lm) -> Path:
    """Two finished membership runs (WikiMIA, BookTection), one interrupted run and one of another kind."""
    path = tmp_path_factory.mktemp("results") / "results.sqlite"
    store = ResultStore(path)
    for name in ("wikimia_length128.parquet", "booktection_sample.csv"):
        dataset = load_labelled_dataset(str(DATA / name), limit=12)
        run_membership_benchmark(
            dataset,
            resolve_model("tiny-random", loader=lambda spec: tiny_lm),
            parse_methods(["loss", "zlib"]),
            store=store,
        )
    broken = store.get_or_create_run(
        "mia", {"dataset": "x", "model": "other-model"}, {"dataset": "half.csv", "model": "other-model", "n_total": 4}
    )
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


def _banners(app: AppTest) -> list[str]:
    return [m.value for m in app.markdown if 'class="leaklens-finding"' in m.value]


def _cards(app: AppTest) -> list[str]:
    return [m.value for m in app.markdown if 'class="leaklens-card"' in m.value]


def _runs_table(app: AppTest):
    """The table of every stored run (the run-id table in Setup has no "finished" column)."""
    return _table(app, "finished (UTC)")


def _download_labels(app: AppTest) -> list[str]:
    return [b.proto.label for b in app.get("download_button")]


def _table(app: AppTest, column: str):
    """The one table with this column (dataframes without selection carry no key in AppTest)."""
    tables = [d.value for d in app.dataframe if column in d.value.columns]
    assert len(tables) == 1, [list(d.value.columns) for d in app.dataframe]
    return tables[0]


@pytest.mark.slow
def test_results_page_shows_runs_heatmap_roc_and_exports(filled_store, monkeypatch):
    app = _page(filled_store, monkeypatch)
    runs = _runs_table(app)
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
    assert any(t["name"].startswith("Log-likelihood") for t in roc)
    assert any(t["name"].startswith("zlib") for t in roc)
    assert _download_labels(app) == [
        "Report of this run (HTML)",
        "AUROC per detector (CSV)",
        "Report of the 2 listed runs (HTML)",
        "AUROC of the listed membership runs (CSV)",
    ]
    assert len(_cards(app)) == 2  # the two finished runs; the unfinished ones are in the table


def test_model_filter_and_empty_store(filled_store, monkeypatch, tmp_path):
    app = _page(filled_store, monkeypatch)
    app.multiselect(key="results_models").set_value(["other-model"]).run()
    assert not app.exception
    assert list(_runs_table(app)["model"]) == ["other-model"]
    assert any("No finished run matches the filters" in i.value for i in app.info)
    assert _cards(app) == []
    assert _banners(app) == []
    assert all(b.proto.disabled for b in app.get("download_button"))

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


def test_the_most_recent_run_opens_first_and_a_card_opens_another(filled_store, monkeypatch):
    from core.membership.benchmark import result_from_store
    from core.membership.finding import membership_finding

    app = _page(filled_store, monkeypatch)
    store = ResultStore(filled_store)
    newest, older = sorted((r for r in store.list_runs("mia") if r.finished), key=lambda r: -r.finished_at)
    (banner,) = _banners(app)
    assert html.escape(membership_finding(result_from_store(store, newest)).headline) in banner
    assert any("the most recent run" in c.value for c in app.caption)
    cards = _cards(app)
    assert newest.run_id in cards[0]
    assert "shown above" in cards[0]
    assert older.run_id in cards[1]
    assert [b.key for b in app.button if b.key.startswith("results_open_")] == [f"results_open_{older.run_id}"]

    app.button(key=f"results_open_{older.run_id}").click().run()
    assert not app.exception, app.exception
    (banner,) = _banners(app)
    assert html.escape(membership_finding(result_from_store(store, older)).headline) in banner
    assert any("opened from the list below" in c.value for c in app.caption)
    assert "shown above" in _cards(app)[1]

    assert app.multiselect(key="results_kinds").options == ["Membership benchmark"]  # kinds with a finished run
    app.multiselect(key="results_kinds").set_value(["mia"]).run()  # the chosen run is still listed: still open
    assert not app.exception, app.exception
    assert len(_cards(app)) == 2
    assert "shown above" in _cards(app)[1]


@pytest.fixture(scope="module")
def mixed_store(tmp_path_factory, tiny_lm) -> Path:
    """A finished MCQ run, an MCQ run stored without its options (older format) and a model's loss-delta sets."""
    from core.data.questions import load_mcq
    from core.mcq.completion import MCQConfig
    from core.mcq.stored import run_stored_benchmark

    path = tmp_path_factory.mktemp("mixed") / "results.sqlite"
    store = ResultStore(path)
    questions = load_mcq(str(DATA / "mmlu_sample.jsonl"), limit=3).questions
    run_stored_benchmark(
        questions,
        MCQConfig(),
        model=resolve_model("tiny-random", loader=lambda _: tiny_lm),
        store=store,
        benchmark="mmlu_sample",
        shuffle_seed=1,
        permutation=True,
    )
    old = store.get_or_create_run("mcq", {"old": 1}, {"dataset": "old_mcq", "model": "tiny-random", "n_total": 1})
    store.add_samples(old.run_id, [SampleRow("0", None, {"completion": 0.0}, {"question": "Q?", "answer": "A"})])
    store.finish_run(old.run_id, {})
    for name, role, losses in (("HumanEval", "test", [1.0, 2.0]), ("reference", "reference", [3.0, 5.0])):
        run = store.get_or_create_run(
            "delta",
            {"model": "tiny-random", "problems": name},
            {"dataset": name, "model": "tiny-random", "role": role, "n_total": 2},
        )
        store.add_samples(run.run_id, [SampleRow(str(i), None, {"solution_loss": x}) for i, x in enumerate(losses)])
        store.finish_run(run.run_id, {"mean_loss": sum(losses) / 2, "n": 2})
    return path


def test_an_mcq_run_opens_from_the_store_with_its_finding_and_charts(mixed_store, monkeypatch):
    from core.mcq.finding import mcq_finding
    from core.mcq.stored import mcq_report_from_run

    app = _page(mixed_store, monkeypatch)
    runs = _runs_table(app)
    assert len(runs) == 3
    assert "run id" not in runs.columns  # two loss-delta sets of one model: one row
    assert list(runs[runs["kind"] == "delta"]["dataset"]) == ["HumanEval vs reference"]

    # The most recent run was stored without its options: it says what to do instead of failing.
    assert any("older LeakLens" in w.value and "again" in w.value for w in app.warning)
    store = ResultStore(mixed_store)
    run = next(r for r in store.list_runs("mcq") if r.dataset == "mmlu_sample")
    app.button(key=f"results_open_{run.run_id}").click().run()
    assert not app.exception, app.exception
    report = mcq_report_from_run(store, run)
    banners = _banners(app)
    assert len(banners) == 1
    assert html.escape(mcq_finding(report).headline) in banners[0]
    completion = _figure(app, "results_mcq_completion")["data"]
    assert completion[0]["y"] == list(report.original.summary("completion").distribution)
    _figure(app, "results_mcq_next")
    _figure(app, "results_mcq_ranks")  # the run had the option-order test
    labels = _download_labels(app)
    assert labels[:2] == ["Report of this run (HTML)", "Score drop per probe (CSV)"]
    html_button = [b for b in app.get("download_button") if b.proto.label.startswith("Report of the")][0]
    assert html_button.proto.label == "Report of the listed run (HTML)"  # the run without options cannot be
    assert not html_button.proto.disabled  # MCQ runs alone can be exported
    assert [b.proto.disabled for b in app.get("download_button") if "AUROC" in b.proto.label] == [True]


def test_loss_delta_runs_are_listed_per_model_with_a_note(mixed_store, monkeypatch):
    app = _page(mixed_store, monkeypatch)
    table = _table(app, "benchmark set")
    assert list(table["model"]) == ["tiny-random"]
    assert list(table["benchmark set"]) == ["HumanEval"]
    assert list(table["benchmark mean loss"]) == [1.5]
    assert list(table["reference mean loss"]) == [4.0]
    assert list(table["reference n"]) == [2]
    assert any("running the test again" in c.value for c in app.caption)
    details = _table(app, "run id")
    assert set(details["run id"]) == {r.run_id for r in ResultStore(mixed_store).list_runs()}


def test_a_stored_loss_delta_comparison_opens_with_its_finding_and_exports(tmp_path, monkeypatch, tiny_lm):
    from core.data.problems import ProblemSet, builtin_problems
    from core.loss_delta.delta import ModelRequest
    from core.loss_delta.finding import leakage_finding
    from core.loss_delta.run import run_leakage_test

    path = tmp_path / "results.sqlite"
    test = builtin_problems(limit=6)
    ref = ProblemSet("fresh set", builtin_problems(limit=12).problems[6:], True)
    report = run_leakage_test(
        test,
        ref,
        [ModelRequest("tiny-random")],
        model=resolve_model("tiny-random", loader=lambda _: tiny_lm),
        store=ResultStore(path),
    )
    app = _page(path, monkeypatch)
    assert app.subheader[0].value.startswith("LeakLens built-in reference vs fresh set")
    banners = _banners(app)
    assert len(banners) == 1
    assert html.escape(leakage_finding(report).headline) in banners[0]
    bars = _figure(app, "results_delta_bars")["data"]
    assert bars
    assert not app.info
    assert list(_table(app, "L_test")["Δ"]) == pytest.approx([report.models[0].stats.delta])
    assert len(_cards(app)) == 1  # the comparison; its problem sets are parts of it
    assert _download_labels(app) == [
        "Report of this run (HTML)",
        "Loss delta per model (CSV)",
        "Report of the listed run (HTML)",
        "AUROC of the listed membership runs (CSV)",
    ]
    html_button = [b for b in app.get("download_button") if b.proto.label.startswith("Report of the")][0]
    assert not html_button.proto.disabled


@pytest.mark.slow
def test_a_stored_dataset_inference_opens_with_its_finding_and_exports(tmp_path, monkeypatch, tiny_lm):
    from core.data.text_sets import load_text_set
    from core.dataset_inference.run import run_dataset_inference

    path = tmp_path / "results.sqlite"
    wikimia = str(DATA / "wikimia_length128.parquet")
    inference = run_dataset_inference(
        load_text_set(wikimia, where=("label", "1"), limit=20),
        load_text_set(wikimia, where=("label", "0"), limit=20),
        resolve_model("tiny-random", loader=lambda spec: tiny_lm),
        parse_methods(["loss", "zlib"]),
        n_splits=3,
        store=ResultStore(path),
    )
    app = _page(path, monkeypatch)
    banners = _banners(app)
    assert len(banners) == 1
    assert html.escape(inference.finding.headline) in banners[0]
    _figure(app, "results_inference_scores")
    _figure(app, "results_inference_weights")
    # Its scores are a membership run in the store, but part of this run: one card, no heatmap, one report section.
    assert len(_cards(app)) == 1
    assert "Dataset inference" in _cards(app)[0]
    assert not [c for c in app.get("plotly_chart") if "results_heatmap" in c.proto.id]
    assert "Report of the listed run (HTML)" in _download_labels(app)
    assert len(_runs_table(app)) == 1


def test_a_stored_benchmark_order_run_opens_with_its_finding_chart_and_exports(tmp_path, monkeypatch, tiny_lm):
    from core.benchmark_order.examples import render_examples
    from core.benchmark_order.run import KIND, run_order_test
    from core.benchmark_order.settings import OrderSettings
    from core.data.tables import load_rows

    path = tmp_path / "results.sqlite"
    test = run_order_test(
        render_examples(load_rows("demo:mcq")),
        OrderSettings(shards=8),
        model=resolve_model("tiny-random", loader=lambda _: tiny_lm),
        store=ResultStore(path),
    )
    app = _page(path, monkeypatch)
    assert app.subheader[0].value == "General-knowledge questions (demo) · tiny-random"
    banners = _banners(app)
    assert len(banners) == 1
    assert html.escape(test.finding.headline) in banners[0]
    published = _figure(app, "results_order_chart")["data"][-1]
    assert published["y"] == pytest.approx([s.difference for s in test.result.shards])
    (card,) = _cards(app)
    assert "Benchmark order test" in card
    assert app.multiselect(key="results_kinds").options == ["Benchmark order test"]
    assert _download_labels(app)[:3] == [
        "Report of this run (HTML)",
        "Published order vs shuffles per shard (CSV)",
        "Report of the listed run (HTML)",
    ]
    shards = _table(app, "shard p-value")
    assert list(shards["examples"]) == [f"{s.start + 1}–{s.stop}" for s in test.result.shards]
    assert ResultStore(path).list_runs(KIND)[0].run_id == test.run_id


def test_two_runs_of_one_question_are_set_side_by_side_with_why_they_differ(tmp_path, monkeypatch, tiny_lm):
    """The demo asked twice (12 texts with two detectors, 8 with one): the page sets the other run beside the
    opened one, and says the rows and the detectors differ."""
    path = tmp_path / "results.sqlite"
    store = ResultStore(path)
    for limit, methods in ((12, ["loss", "zlib"]), (8, ["loss"])):
        dataset = load_labelled_dataset("demo:famous-vs-fresh", limit=limit)
        run_membership_benchmark(
            dataset, resolve_model("tiny-random", loader=lambda spec: tiny_lm), parse_methods(methods), store=store
        )
    app = _page(path, monkeypatch)
    same = [e for e in app.expander if e.label.startswith("This question was run 2 times")]
    assert len(same) == 1, [e.label for e in app.expander]
    shown = [m.value for m in same[0].markdown]
    cards = [h.proto.body for h in same[0].get("html") if 'class="leaklens-card"' in h.proto.body]
    assert len(cards) == 2 and "tiny-random" in cards[1], cards
    reasons = "\n".join(shown)
    assert "Data: 8 rows in this run, 12 in the other" in reasons, reasons
    assert "Detectors: 1 in this run, 2 in the other; only the other used" in reasons, reasons
