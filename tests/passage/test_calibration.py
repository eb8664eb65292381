"""Calibration sets from stored membership runs: members and non-members per method, usable runs only."""

from __future__ import annotations

import math

import pytest

from core.errors import LeakLensError
from core.membership.benchmark import KIND, SCORE_DEFINITIONS
from core.passage.known_runs import calibration_from_run, calibration_label, calibration_runs
from core.passage.summary import calibration_percentiles
from core.store.results import ResultStore, SampleRow


def _run(
    store: ResultStore,
    dataset: str,
    model: str,
    rows: list[SampleRow],
    *,
    definitions=SCORE_DEFINITIONS,
    finish: bool = True,
    kind: str = KIND,
):
    key = {"dataset": dataset, "model": model, "score_definitions": definitions}
    run = store.get_or_create_run(kind, key, {"dataset": dataset, "model": model, "n_total": len(rows)})
    store.add_samples(run.run_id, rows)
    return store.finish_run(run.run_id, {}) if finish else store.get_run(run.run_id)


ROWS = [
    SampleRow("a", 1, {"loss": -1.0, "zlib": -0.1}),
    SampleRow("b", 1, {"loss": -2.0, "zlib": None}),
    SampleRow("c", 0, {"loss": -5.0, "zlib": -0.5}),
    SampleRow("d", 0, {"loss": float("nan"), "zlib": -0.6}),
    SampleRow("e", None, {"loss": -3.0}),
]


def test_members_and_non_members_per_method_without_missing_scores(tmp_path):
    store = ResultStore(tmp_path / "r.sqlite")
    run = _run(store, "wikimia.parquet", "tiny-random", ROWS)
    calibration = calibration_from_run(store, run)
    assert calibration.members == {"loss": [-1.0, -2.0], "zlib": [-0.1]}
    assert calibration.non_members == {"loss": [-5.0], "zlib": [-0.5, -0.6]}
    assert calibration.name == calibration_label(run)
    assert "wikimia.parquet" in calibration.name
    assert "tiny-random" in calibration.name
    assert all(
        math.isfinite(v)
        for side in (calibration.members, calibration.non_members)
        for values in side.values()
        for v in values
    )
    # The passage's scores are placed among them exactly as with a hand-made calibration set.
    (row,) = calibration_percentiles({"loss": -3.0}, calibration)
    assert (row.above_members, row.above_non_members) == (0.0, 100.0)


def test_runs_of_the_inspected_model_come_first_and_unusable_runs_are_left_out(tmp_path):
    store = ResultStore(tmp_path / "r.sqlite")
    other = _run(store, "a.jsonl", "other-model", ROWS)
    mine = _run(store, "b.jsonl", "tiny-random", ROWS)
    _run(store, "c.jsonl", "tiny-random", ROWS, definitions=SCORE_DEFINITIONS - 1)  # old score signs
    _run(store, "d.jsonl", "tiny-random", ROWS, finish=False)  # unfinished
    _run(store, "e.jsonl", "tiny-random", ROWS, kind="mcq")  # another test
    assert [r.run_id for r in calibration_runs(store, "tiny-random")] == [mine.run_id, other.run_id]
    assert [r.run_id for r in calibration_runs(store, "other-model")] == [other.run_id, mine.run_id]
    assert calibration_runs(ResultStore(tmp_path / "empty.sqlite"), "tiny-random") == []


def test_unusable_runs_are_refused_with_a_reason(tmp_path):
    store = ResultStore(tmp_path / "r.sqlite")
    unfinished = _run(store, "d.jsonl", "tiny-random", ROWS, finish=False)
    with pytest.raises(LeakLensError, match="not finished"):
        calibration_from_run(store, unfinished)
    mcq = _run(store, "e.jsonl", "tiny-random", ROWS, kind="mcq")
    with pytest.raises(LeakLensError, match="not a membership benchmark"):
        calibration_from_run(store, mcq)
    one_sided = _run(store, "f.jsonl", "tiny-random", [SampleRow("a", 1, {"loss": -1.0})])
    with pytest.raises(LeakLensError, match="no scored members or no scored non-members"):
        calibration_from_run(store, one_sided)


def test_the_fresh_lengths_are_tokenized_once_per_model_and_set(tiny_lm, monkeypatch):
    """Every passage inspected before the set is complete asks for the lengths again; a served model's tokenizer
    would answer each with a request per fresh passage."""
    import core.engine.scoring as scoring
    from core.passage.calibration import fresh_lengths, load_fresh_passages

    passages = load_fresh_passages()[:40]
    calls = []
    real = scoring.encode_texts

    def counted(lm, texts, *args, **kwargs):
        calls.append(len(texts))
        return real(lm, texts, *args, **kwargs)

    monkeypatch.setattr(scoring, "encode_texts", counted)
    first = fresh_lengths(tiny_lm, passages)
    assert fresh_lengths(tiny_lm, passages) == first
    assert calls in ([40], [])  # tokenized here once (or already by an earlier test in this process)
    assert first == tuple(len(tiny_lm.tokenizer(p.text, add_special_tokens=False)["input_ids"]) for p in passages)
    assert len(fresh_lengths(tiny_lm, passages[:39])) == 39  # another set is its own entry
