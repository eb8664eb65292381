"""Stored runs as stories: which runs are parts of others, the list of verdict cards, the opened run, and the
exports (combined report, CSV) that show each run once with its verdict."""

from __future__ import annotations

import csv
import io
import time
from html import escape
from pathlib import Path

import pytest

from core.data.demo import name_label, pair_label
from core.data.labelled import load_labelled_dataset
from core.data.text_sets import load_text_set
from core.dataset_inference.run import run_dataset_inference
from core.engine.handle import resolve_model
from core.membership.benchmark import run_membership_benchmark
from core.methods import parse_methods
from core.results.overview import (
    filter_runs,
    opened_run,
    parts_of,
    run_details,
    run_table,
    story_runs,
    unfinished_runs,
)
from core.results.report import stored_runs_report
from core.results.stored import data_label, open_stored, run_card, stored_csv, try_open
from core.stats.finding import Finding
from core.store.results import ResultStore, RunInfo, SampleRow
from core.viz.csv_export import CONTEXT_COLUMNS
from core.viz.reports.membership import results_csv
from core.viz.run_cards import card_html

DEMO = "demo:famous-vs-fresh"
METHODS = ["loss", "zlib"]


@pytest.fixture(scope="module")
def stored(tmp_path_factory, tiny_lm) -> dict:
    """A membership run, then a dataset inference (its scores a membership run of their own), then an MCQ run and
    a loss-delta comparison, then an interrupted membership run of another model."""
    from core.data.problems import ProblemSet, builtin_problems
    from core.data.questions import load_mcq
    from core.loss_delta.delta import ModelRequest
    from core.loss_delta.run import run_leakage_test
    from core.mcq.completion import MCQConfig
    from core.mcq.stored import run_stored_benchmark

    store = ResultStore(tmp_path_factory.mktemp("stories") / "results.sqlite")
    load = lambda spec: tiny_lm  # noqa: E731
    membership = run_membership_benchmark(
        load_labelled_dataset(DEMO, limit=12),
        resolve_model("tiny-random", loader=load),
        parse_methods(METHODS),
        store=store,
    )
    time.sleep(0.01)
    inference = run_dataset_inference(
        load_text_set(DEMO, where=("label", "1"), limit=10),
        load_text_set(DEMO, where=("label", "0"), limit=10),
        resolve_model("tiny-random", loader=load),
        parse_methods(METHODS),
        n_splits=3,
        store=store,
    )
    time.sleep(0.01)
    run_stored_benchmark(
        load_mcq("demo:mcq", limit=3).questions,
        MCQConfig(),
        model=resolve_model("tiny-random", loader=lambda _: tiny_lm),
        store=store,
        benchmark="demo:mcq",
    )
    time.sleep(0.01)
    ref = ProblemSet("fresh set", builtin_problems(limit=8).problems[4:], True)
    run_leakage_test(
        builtin_problems(limit=4),
        ref,
        [ModelRequest("tiny-random")],
        model=resolve_model("tiny-random", loader=lambda _: tiny_lm),
        store=store,
    )
    broken = store.get_or_create_run(
        "mia", {"dataset": "x", "model": "other-model"}, {"dataset": "half.csv", "model": "other-model", "n_total": 4}
    )
    store.add_samples(broken.run_id, [SampleRow("a", 1, {"loss": -1.0})])
    store.mark_interrupted(broken.run_id)
    runs = store.list_runs()
    by_kind = {kind: [r for r in runs if r.kind == kind] for kind in {r.kind for r in runs}}
    scores = next(r for r in by_kind["mia"] if r.run_id == inference.scores.run_id)
    return {
        "store": store,
        "runs": runs,
        "by_kind": by_kind,
        "membership": membership,
        "inference": inference,
        "scores": scores,
        "broken": broken,
    }


@pytest.mark.slow
def test_a_dataset_inference_run_owns_its_scores_and_a_comparison_its_problem_sets(stored):
    runs, by_kind = stored["runs"], stored["by_kind"]
    parts = parts_of(runs)
    (inference,) = by_kind["dataset-inference"]
    (comparison,) = by_kind["delta-comparison"]
    assert parts[stored["scores"].run_id] == inference.run_id
    assert {r.run_id for r in by_kind["delta"]} <= set(parts)
    assert all(parts[r.run_id] == comparison.run_id for r in by_kind["delta"])
    assert stored["membership"].run_id not in parts
    assert inference.run_id not in parts


def test_stories_are_the_finished_runs_with_a_verdict_each_once_newest_first(stored):
    stories = story_runs(stored["runs"])
    kinds = [r.kind for r in stories]
    assert kinds == ["delta-comparison", "mcq", "dataset-inference", "mia"]  # newest finished first
    assert stored["scores"].run_id not in {r.run_id for r in stories}  # the inference's scores: not a story
    assert stories[-1].run_id == stored["membership"].run_id
    assert [r.run_id for r in unfinished_runs(stored["runs"])] == [stored["broken"].run_id]
    assert filter_runs(stories, kinds=["mia", "mcq"]) == [stories[1], stories[3]]
    assert filter_runs(stories, models=["other-model"]) == []
    assert filter_runs(stories) == stories


def test_the_page_opens_on_the_most_recent_run_until_another_is_chosen(stored):
    stories = story_runs(stored["runs"])
    newest, older = stories[0], stories[2]
    assert opened_run([]) is None
    assert opened_run(stories) is newest
    assert opened_run(stories, older.run_id, newest_when_chosen=newest.run_id) is older
    # a run stored after the choice was made is what the reader comes back to
    assert opened_run(stories, older.run_id, newest_when_chosen="an-older-newest") is newest
    # the chosen run filtered out: the most recent of what is listed
    listed = filter_runs(stories, kinds=["mia"])
    assert opened_run(listed, older.run_id, newest_when_chosen=newest.run_id, newest=newest.run_id) is listed[0]


def test_run_tables_list_a_part_under_its_owner(stored):
    runs, inference = stored["runs"], stored["inference"]
    rows = run_table(runs)
    assert [r["kind"] for r in rows].count("mia") == 2  # the membership run and the interrupted one, not the scores
    assert "delta" not in {r["kind"] for r in rows}  # the comparison's problem sets are in its row
    (row,) = [r for r in rows if r["kind"] == "dataset-inference"]
    assert row["done"] == row["total"] == inference.result.n_suspect + inference.result.n_validation
    details = {r["run id"]: r for r in run_details(runs)}
    assert len(details) == len(runs)  # every run keeps its id for the report command
    assert details[stored["scores"].run_id]["role"].startswith("part of dataset inference run ")


def test_names_read_as_people_call_the_data():
    assert name_label(DEMO) == "Famous vs fresh passages (demo)"
    assert name_label(f"{DEMO} (label=1)") == "Famous vs fresh passages (demo) (label=1)"
    assert name_label("books.csv (label=1)") == "books.csv (label=1)"
    assert pair_label(f"{DEMO} (label=1)", f"{DEMO} (label=0)") == "Famous vs fresh passages (demo): label=1 vs label=0"
    assert pair_label("a.csv", DEMO) == "a.csv vs Famous vs fresh passages (demo)"


def test_every_story_reopens_with_its_verdict_and_a_card(stored):
    store = stored["store"]
    for run in story_runs(stored["runs"]):
        opened = open_stored(store, run)
        assert isinstance(opened.finding, Finding)
        card = run_card(run, opened)
        assert card.level == opened.finding.level
        assert card.headline == opened.finding.headline
        assert card.model == "tiny-random"
        assert card.date.endswith(" UTC")
        assert card.data == data_label(run)
        assert "demo:" not in card.data
        html = card_html(card, opened=True)
        assert 'class="leaklens-card"' in html
        assert "shown above" in html
        assert "leaklens-finding" not in html
    inference = next(r for r in story_runs(stored["runs"]) if r.kind == "dataset-inference")
    assert open_stored(store, inference).finding == stored["inference"].finding
    assert data_label(inference) == "Famous vs fresh passages (demo): label=1 vs label=0"


def test_a_run_that_cannot_be_opened_gets_a_card_that_says_why(stored):
    result, why = try_open(stored["store"], stored["broken"])
    assert result is None
    assert "not finished" in why
    card = run_card(stored["broken"], None, why)
    assert card.level is None
    assert card.headline == why
    odd = RunInfo("r1", "mia", {}, {"dataset": "<b>x</b>"}, "finished", 0, 0, 0.0, 0.0, 1.0, {}, "<b>x</b>", "m")
    html = card_html(run_card(odd, None, "Cannot <open>"))
    assert "Cannot be opened" in html
    assert "&lt;open&gt;" in html
    assert "&lt;b&gt;x&lt;/b&gt;" in html


def test_the_combined_report_shows_each_run_once(stored, tmp_path):
    store, inference = stored["store"], stored["inference"]
    every_finished = [r for r in stored["runs"] if r.finished and r.kind != "delta"]
    assert stored["scores"] in every_finished
    html = stored_runs_report(store, every_finished)
    assert html.count('class="leaklens-finding"') == 4  # membership, inference, MCQ, comparison: scores not twice
    assert escape(inference.finding.headline) in html
    assert html.count("<section ") == 4
    # asked for on its own, the scores run is reported (the command line names it by id)
    alone = stored_runs_report(store, [stored["scores"]])
    assert alone.count('class="leaklens-finding"') == 1
    # in the order given: the most recent first, as the Results page lists them
    stories = story_runs(stored["runs"])
    ordered = stored_runs_report(store, stories)
    headings = [
        ordered.index(f"<h2>{escape(h)}")
        for h in (
            "Loss delta",
            "Multiple-choice memorisation",
            "Dataset inference · Famous vs fresh passages (demo): label=1",
        )
    ]
    assert headings == sorted(headings)


def test_csv_exports_lead_every_row_with_the_verdict_model_and_data(stored):
    store = stored["store"]
    labels = {}
    for run in story_runs(stored["runs"]):
        opened = open_stored(store, run)
        export = stored_csv(opened)
        labels[run.kind] = export.label
        rows = list(csv.DictReader(io.StringIO(export.text)))
        assert rows
        assert export.label.endswith("(CSV)")
        assert export.file_name.endswith(".csv")
        header = list(rows[0])
        assert header[:4] == list(CONTEXT_COLUMNS)
        assert {"ci_low", "ci_high"} <= set(header)
        assert all(
            r["verdict"] == opened.finding.level
            and r["verdict_headline"] == opened.finding.headline
            and r["model"] == "tiny-random"
            and r["data"] == data_label(run)
            for r in rows
        )
    assert labels == {
        "mia": "AUROC per detector (CSV)",
        "dataset-inference": "Each detector's AUROC and weight (CSV)",
        "mcq": "Score drop per probe (CSV)",
        "delta-comparison": "Loss delta per model (CSV)",
    }


def test_the_membership_csv_of_several_runs_carries_each_runs_verdict(stored):
    from core.membership.finding import membership_finding

    membership = stored["membership"]
    text = results_csv([membership])
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0])[:4] == list(CONTEXT_COLUMNS)
    assert "ci_low" in rows[0]
    assert "run_id" in rows[0]
    finding = membership_finding(membership)
    assert {r["verdict"] for r in rows} == {finding.level}
    assert {r["data"] for r in rows} == {"Famous vs fresh passages (demo)"}


def test_heatmap_column_names_sit_on_top_in_readable_lines(stored):
    from dataclasses import replace

    from core.viz.membership_plots import auroc_heatmap

    membership = stored["membership"]
    other = replace(membership, run_id="other", model="smollm2-135m")
    figure = auroc_heatmap([membership, other])
    axis = figure.layout.xaxis
    assert axis.side == "top"
    assert list(axis.ticktext) == [
        "Famous vs fresh passages (demo)<br>tiny-random",
        "Famous vs fresh passages (demo)<br>smollm2-135m",
    ]
    assert list(axis.tickvals) == list(figure.data[0].x)


def test_report_files_never_name_a_path(stored):
    html = stored_runs_report(stored["store"], story_runs(stored["runs"]))
    assert "Famous vs fresh passages (demo)" in html
    assert str(Path(stored["store"].path).parent) not in html
