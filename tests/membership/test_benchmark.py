"""Benchmark runs: scores equal the direct path, metrics equal core.stats.metrics, resume, store reuse, JSON."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import pytest

from core.config import SHARED_DATA_DIR
from core.data.labelled import labelled_from_table, load_labelled_dataset
from core.data.tables import Table
from core.engine.bundled import tiny_random_model
from core.engine.handle import resolve_model
from core.engine.models import wrap_model
from core.errors import LeakLensError
from core.membership.benchmark import (
    KIND,
    OLD_DEFINITIONS_NOTE,
    dataset_display_name,
    result_from_store,
    run_key,
    run_membership_benchmark,
    stored_results,
)
from core.methods import Method, parse_methods
from core.methods.analysis import analyse_passages
from core.stats.metrics import blind_baseline, ensemble, evaluate, roc_points
from core.store.results import FINISHED, INTERRUPTED, ResultStore, SampleRow

DATA = SHARED_DATA_DIR
METHODS = ["loss", "zlib", "min_k:k=20"]


@pytest.fixture(scope="module")
def wikimia_small():
    return load_labelled_dataset(str(DATA / "wikimia_length128.parquet"), limit=20, seed=1)


class CountingLoader:
    """Hands out the session's tiny model and counts how often a model was asked for."""

    def __init__(self, lm):
        self.lm = lm
        self.calls: list[str] = []

    def __call__(self, spec: str):
        self.calls.append(spec)
        return self.lm


@pytest.mark.slow
def test_scores_and_metrics_match_independent_paths(tmp_path, tiny_lm, wikimia_small):
    ds = wikimia_small
    methods = parse_methods(METHODS)
    seen: list[tuple[int, int]] = []
    loader = CountingLoader(tiny_lm)
    result = run_membership_benchmark(
        ds,
        resolve_model("tiny-random", loader=loader),
        methods,
        store=ResultStore(tmp_path / "r.sqlite"),
        batch_size=7,
        progress=lambda d, t: seen.append((d, t)),
    )
    assert loader.calls == ["tiny-random"]
    assert seen == [(0, 20), (7, 20), (14, 20), (20, 20)]
    assert result.n == 20
    assert result.n_computed == 20
    assert result.status == FINISHED
    assert [s.sample_id for s in result.samples] == ds.ids
    assert result.labels == ds.labels
    direct = analyse_passages(tiny_lm, ds.texts, methods)  # one pass over all texts, no batching
    for key in result.method_keys:
        got = result.scores(key)
        want = [a.scores[key] for a in direct]
        assert got == pytest.approx(want, rel=1e-4, abs=1e-5), key
        assert result.metrics[key] == evaluate(ds.labels, got)
    assert result.samples[0].summary["n_tokens"] == direct[0].records.n_tokens
    assert result.samples[0].summary["loss"] == pytest.approx(direct[0].records.loss, rel=1e-4)
    assert result.blind_baseline == blind_baseline(ds.texts, ds.labels)
    assert result.ensemble == ensemble({k: result.scores(k) for k in result.method_keys}, ds.labels)
    fpr, tpr = result.roc("loss")
    want_fpr, want_tpr = roc_points(ds.labels, result.scores("loss"))
    assert fpr == want_fpr.tolist()
    assert tpr == want_tpr.tolist()


def test_finished_run_comes_from_store_without_model(tmp_path, tiny_lm, wikimia_small):
    store = ResultStore(tmp_path / "r.sqlite")
    first = run_membership_benchmark(
        wikimia_small, resolve_model("tiny-random", loader=CountingLoader(tiny_lm)), parse_methods(METHODS), store=store
    )

    def refuse(spec):
        raise AssertionError("a finished run must not load the model")

    again = run_membership_benchmark(
        wikimia_small, resolve_model("tiny-random", loader=refuse), parse_methods(METHODS), store=store
    )
    assert again.n_computed == 0
    assert again.from_store
    assert again.elapsed_s < 5
    assert again.metrics == first.metrics
    assert again.blind_baseline == first.blind_baseline
    assert again.ensemble == first.ensemble
    assert again.to_json() == first.to_json()
    (run,) = store.list_runs(KIND)
    assert run.status == FINISHED
    assert run.n_done == 20
    assert run.n_total == 20
    assert run.dataset == "wikimia_length128.parquet"
    assert run.model == "tiny-random"
    rebuilt = result_from_store(store, run)
    assert rebuilt.to_json() == first.to_json()
    assert [r.run_id for r in stored_results(store)] == [first.run_id]
    assert stored_results(store, model="other") == []


def test_runs_stored_under_older_score_definitions_are_kept_but_not_reused(tmp_path, tiny_lm, wikimia_small):
    store = ResultStore(tmp_path / "r.sqlite")
    methods = parse_methods(METHODS)
    key = run_key(wikimia_small, "tiny-random", methods, None)
    old_key = {k: v for k, v in key.items() if k != "score_definitions"}  # what earlier versions wrote
    old = store.get_or_create_run(
        KIND, old_key, {"dataset": "wikimia_length128.parquet", "model": "tiny-random", "n_total": wikimia_small.n}
    )
    rows = [SampleRow(i, y, {m.key: 0.0 for m in methods}) for i, y in zip(wikimia_small.ids, wikimia_small.labels)]
    store.add_samples(old.run_id, rows)
    store.finish_run(
        old.run_id,
        {"dataset": "wikimia_length128.parquet", "model": "tiny-random", "methods": {m.key: None for m in methods}},
    )

    loader = CountingLoader(tiny_lm)
    current = run_membership_benchmark(wikimia_small, resolve_model("tiny-random", loader=loader), methods, store=store)
    assert loader.calls == ["tiny-random"]
    assert current.n_computed == wikimia_small.n  # scored afresh
    assert current.run_id != old.run_id
    assert OLD_DEFINITIONS_NOTE not in current.notes
    assert {r.run_id for r in store.list_runs(KIND)} == {old.run_id, current.run_id}  # nothing deleted
    assert result_from_store(store, store.get_run(old.run_id)).notes[0] == OLD_DEFINITIONS_NOTE
    assert OLD_DEFINITIONS_NOTE not in result_from_store(store, store.get_run(current.run_id)).notes


def test_interrupted_run_resumes_only_missing(tmp_path, tiny_lm, wikimia_small):
    store = ResultStore(tmp_path / "r.sqlite")
    methods = parse_methods(METHODS)

    def stop_after_two_batches(done, total):
        if done >= 10:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_membership_benchmark(
            wikimia_small,
            resolve_model("tiny-random", loader=CountingLoader(tiny_lm)),
            methods,
            store=store,
            batch_size=5,
            progress=stop_after_two_batches,
        )
    (run,) = store.list_runs(KIND)
    assert run.status == INTERRUPTED
    assert run.n_done == 10
    assert store.done_sample_ids(run.run_id) == set(wikimia_small.ids[:10])

    seen = []
    resumed = run_membership_benchmark(
        wikimia_small,
        resolve_model("tiny-random", loader=CountingLoader(tiny_lm)),
        methods,
        store=store,
        batch_size=5,
        progress=lambda d, t: seen.append(d),
    )
    assert resumed.n_computed == 10
    assert seen == [10, 15, 20]
    fresh = run_membership_benchmark(
        wikimia_small,
        resolve_model("tiny-random", loader=CountingLoader(tiny_lm)),
        methods,
        store=ResultStore(tmp_path / "b.sqlite"),
    )
    for key in fresh.method_keys:
        assert resumed.scores(key) == pytest.approx(fresh.scores(key), rel=1e-4, abs=1e-5)
    assert store.get_run(run.run_id).status == FINISHED


def test_json_document_format(tmp_path, tiny_lm, wikimia_small):
    result = run_membership_benchmark(
        wikimia_small,
        resolve_model("tiny-random", loader=CountingLoader(tiny_lm)),
        parse_methods(METHODS),
        store=ResultStore(tmp_path / "r.sqlite"),
    )
    doc = json.loads(json.dumps(result.to_json(), allow_nan=False))
    assert list(doc) == ["dataset", "model", "n", "methods", "blind_baseline", "ensemble", "samples", "notes"]
    assert doc["dataset"] == "wikimia_length128.parquet"
    assert doc["model"] == "tiny-random"
    assert doc["n"] == 20
    assert list(doc["methods"]) == ["loss", "zlib", "min_k_20"]
    for entry in [*doc["methods"].values(), doc["blind_baseline"], doc["ensemble"]]:
        assert set(entry) == {"auroc", "ci", "tpr_at_1_fpr", "tpr_at_5_fpr"}
        assert len(entry["ci"]) == 2
        assert entry["ci"][0] <= entry["auroc"] <= entry["ci"][1]
    assert doc["methods"]["loss"]["auroc"] == result.metrics["loss"].auroc
    sample = doc["samples"][0]
    assert set(sample) == {"id", "label", "scores"}
    assert sample["id"] == wikimia_small.ids[0]
    assert set(sample["scores"]) == {"loss", "zlib", "min_k_20"}
    assert sample["scores"]["loss"] == pytest.approx(result.scores("loss")[0])


def test_reference_model_run(tmp_path, tiny_lm, wikimia_small):
    other = wrap_model(tiny_random_model(tiny_lm.tokenizer, seed=7), tiny_lm.tokenizer, spec="tiny-random-7")
    models = {"tiny-random": tiny_lm, "tiny-random-7": other}
    ds = load_labelled_dataset(str(DATA / "wikimia_length128.parquet"), limit=8, seed=2)
    result = run_membership_benchmark(
        ds,
        resolve_model("tiny-random", loader=models.__getitem__),
        parse_methods(["loss"]),
        store=ResultStore(tmp_path / "r.sqlite"),
        reference_model="tiny-random-7",
    )
    assert result.method_keys == ["loss", "reference_tiny_random_7"]
    target = analyse_passages(tiny_lm, ds.texts, parse_methods(["loss"]))
    reference = analyse_passages(other, ds.texts, parse_methods(["loss"]))
    want = [r.records.loss - t.records.loss for t, r in zip(target, reference)]
    assert result.scores("reference_tiny_random_7") == pytest.approx(want, rel=1e-4, abs=1e-5)
    assert result.blind_baseline is not None  # 8 texts, 4 per class: 4-fold is still possible


def test_bad_arguments(tmp_path, tiny_lm, wikimia_small):
    store = ResultStore(tmp_path / "r.sqlite")
    with pytest.raises(LeakLensError, match="batch size"):
        run_membership_benchmark(wikimia_small, resolve_model("tiny-random"), store=store, batch_size=0)
    with pytest.raises(LeakLensError, match="No model"):
        run_membership_benchmark(wikimia_small, resolve_model("  "), store=store)
    assert store.list_runs() == []


@dataclass(frozen=True)
class Undefined(Method):
    """A detector that can never score (e.g. text too short): its AUROC must be reported as missing."""

    family = "undefined"
    title = "Undefined"
    description = "Always NaN."

    def score(self, records, aux=None) -> float:
        return math.nan


def test_tiny_dataset_and_unscorable_method(tmp_path, tiny_lm):
    rows = [
        {"text": t, "label": y}
        for t, y in [("The cat sat.", 1), ("A dog ran far.", 0), ("Rain fell.", 1), ("Snow.", 0)]
    ]
    ds = labelled_from_table(Table(rows=rows, columns=["text", "label"], source="four rows"))
    methods = [*parse_methods(["loss"]), Undefined()]
    result = run_membership_benchmark(
        ds,
        resolve_model("tiny-random", loader=CountingLoader(tiny_lm)),
        methods,
        store=ResultStore(tmp_path / "r.sqlite"),
    )
    assert result.metrics["loss"] is not None
    assert result.metrics["loss"].n == 4
    assert result.metrics["undefined"] is None
    assert any(note.startswith("undefined:") for note in result.notes)
    assert result.blind_baseline is not None
    assert result.ensemble is not None  # 2-fold with two per class
    doc = json.loads(json.dumps(result.to_json(), allow_nan=False))
    assert doc["methods"]["undefined"] is None
    assert doc["samples"][0]["scores"]["undefined"] is None
    rows_out = {r["method"]: r for r in result.table_rows()}
    assert rows_out["undefined"]["auroc"] is None
    assert rows_out["blind_baseline"]["auroc"] is not None


def test_display_names():
    assert dataset_display_name("/a/b/wikimia.parquet") == "wikimia.parquet"
    hub = "swj0419/WikiMIA [WikiMIA_length128]"
    assert dataset_display_name(f"hub dataset {hub}") == hub
    assert dataset_display_name("upload.csv") == "upload.csv"
