"""The stored-run helper every test kind builds its run with: lazy model, display facts, weights note."""

from __future__ import annotations

from core.store.results import ResultStore, SampleRow
from core.store.runloop import RunRequest
from core.store.stored_run import run_meta, run_stored

IDS = [f"s{i}" for i in range(5)]


def _score(model: str, positions: list[int]) -> list[SampleRow]:
    return [SampleRow(IDS[p], None, {"score": float(p)}, {"by": model}) for p in positions]


def _run(store: ResultStore, identity: str, loads: list[str]):
    def load() -> str:
        loads.append(identity)
        return identity

    request = RunRequest(
        "demo", {"data": "d1", "model_identity": identity}, run_meta(dataset="d1", model="m", n_total=5)
    )
    return run_stored(
        store, request, IDS, load=load, score=_score, summarise=lambda rows: {"n": len(rows)}, batch_size=2
    )


def test_the_model_loads_once_for_a_run_and_never_for_a_stored_one(tmp_path):
    store = ResultStore(tmp_path / "r.sqlite")
    loads: list[str] = []
    first = _run(store, "w1", loads)
    assert loads == ["w1"]
    assert first.n_computed == 5
    assert [s.summary["by"] for s in first.samples] == ["w1"] * 5
    again = _run(store, "w1", loads)
    assert loads == ["w1"]
    assert again.n_computed == 0
    assert again.run.run_id == first.run.run_id
    assert again.notes == ()


def test_other_weights_on_the_same_data_give_the_weights_changed_note(tmp_path):
    store = ResultStore(tmp_path / "r.sqlite")
    first = _run(store, "w1", [])
    changed = _run(store, "w2", [])
    assert changed.n_computed == 5
    assert len(changed.notes) == 1
    assert first.run.run_id in changed.notes[0]
    assert "'m'" in changed.notes[0]


def test_run_meta_keeps_the_listed_facts_and_only_a_given_task():
    meta = run_meta(dataset="d", model="m", n_total=3, provenance={"command": "x"}, role="base")
    assert meta == {"dataset": "d", "model": "m", "n_total": 3, "role": "base", "provenance": {"command": "x"}}
    assert run_meta(dataset="d", model="m", n_total=3, task="mcq")["task"] == "mcq"
