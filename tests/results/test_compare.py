"""Two stored runs of one question: which runs ask it, and the plain reasons their answers may differ."""

from __future__ import annotations

import time

from core.results.compare import same_question, why_they_differ
from core.store.results import ResultStore, RunInfo

DEMO = "demo:famous-vs-fresh"


def _membership(store: ResultStore, *, rows: str, n: int, methods: list[str], model: str = "m") -> RunInfo:
    key = {"dataset": rows, "model": model, "methods": sorted(methods), "score_definitions": 3}
    meta = {
        "dataset": DEMO,
        "model": model,
        "n_total": n,
        "methods": methods,
        "method_labels": {"loss": "Loss", "zlib": "Zlib ratio", "min_k_20": "Min-K% (k=20%)"},
    }
    run = store.get_or_create_run("mia", key, meta)
    time.sleep(0.01)
    return store.finish_run(run.run_id, {})


def test_the_other_runs_of_a_question_share_test_model_and_data(tmp_path):
    store = ResultStore(tmp_path / "results.sqlite")
    hundred = _membership(store, rows="a", n=100, methods=["loss", "zlib", "min_k_20"])
    twenty = _membership(store, rows="b", n=20, methods=["loss"])
    other_model = _membership(store, rows="a", n=100, methods=["loss"], model="other")
    unfinished = store.get_or_create_run("mia", {"dataset": "c", "model": "m"}, {"dataset": DEMO, "model": "m"})
    runs = store.list_runs()
    assert [r.run_id for r in same_question(runs, hundred)] == [twenty.run_id]
    assert [r.run_id for r in same_question(runs, twenty)] == [hundred.run_id]
    assert same_question(runs, other_model) == []
    assert unfinished.run_id not in {r.run_id for r in same_question(runs, hundred)}


def test_rows_and_detectors_that_differ_are_said_in_plain_words(tmp_path):
    store = ResultStore(tmp_path / "results.sqlite")
    hundred = _membership(store, rows="a", n=100, methods=["loss", "zlib", "min_k_20"])
    twenty = _membership(store, rows="b", n=20, methods=["loss"])
    reasons = why_they_differ(hundred, twenty)
    assert len(reasons) == 2, reasons
    assert reasons[0].startswith("Data: 100 rows in this run, 20 in the other (another sample or limit")
    assert reasons[1].startswith(
        "Detectors: 3 in this run, 1 in the other; only this run used Zlib ratio, Min-K% (k=20%)."
    )
    back = why_they_differ(twenty, hundred)
    assert back[1].startswith("Detectors: 1 in this run, 3 in the other; only the other used Zlib ratio, Min-K%")


def test_settings_and_versions_that_differ_are_named_and_equal_runs_give_no_reason(tmp_path):
    store = ResultStore(tmp_path / "results.sqlite")
    base = {"model": "m", "examples": "x", "shards": 8, "seed": 0, "permutations": 10}
    first = store.finish_run(
        store.get_or_create_run("benchmark-order", base, {"dataset": "q", "n_total": 8}).run_id, {}
    )
    second = store.finish_run(
        store.get_or_create_run("benchmark-order", {**base, "shards": 50, "sample_format": 2}, {"dataset": "q"}).run_id,
        {},
    )
    assert why_they_differ(first, second) == [
        "Setting, shards: 8 in this run, 50 in the other.",
        "LeakLens version: the runs were scored by different versions of LeakLens.",
    ]
    assert why_they_differ(first, first) == []
