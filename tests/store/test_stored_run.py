"""The stored-run helper every test kind builds its run with: lazy model, display facts, weights note."""

from __future__ import annotations

import pytest

from core.errors import LeakLensError
from core.store.results import ResultStore, SampleRow
from core.store.runloop import RunRequest
from core.store.stored_run import data_name, finished_run, run_meta, run_stored

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


def test_only_the_wanted_samples_are_scored_in_their_order_and_the_rest_later(tmp_path):
    """A verdict that needs some samples first gets them first; the run stays resumable until all are stored."""
    store = ResultStore(tmp_path / "r.sqlite")
    scored: list[int] = []
    request = RunRequest("demo", {"data": "d1"}, run_meta(dataset="d1", model="m", n_total=5))

    def score(model: str, positions: list[int]) -> list[SampleRow]:
        scored.extend(positions)
        return _score(model, positions)

    def run(only, seen: list[tuple[int, int]] | None = None):
        return run_stored(
            store,
            request,
            IDS,
            load=lambda: "w",
            score=score,
            summarise=lambda rows: {"n": len(rows)},
            batch_size=2,
            only=only,
            progress=None if seen is None else lambda done, total: seen.append((done, total)),
        )

    seen: list[tuple[int, int]] = []
    first = run([3, 1, 3], seen)
    assert scored == [3, 1]
    assert [s.sample_id for s in first.samples] == ["s3", "s1"]
    assert not first.run.finished and first.n_computed == 2
    assert seen == [(0, 2), (2, 2)]  # progress counts what was asked for
    second = run([1, 4])  # s1 is stored already: only s4 is new
    assert scored == [3, 1, 4]
    assert second.n_computed == 1 and not second.run.finished
    whole = run(None)
    assert scored == [3, 1, 4, 0, 2]
    assert whole.run.finished and whole.run.summary == {"n": 5}
    assert run([0]).n_computed == 0  # a finished run is read back whatever is asked for


def test_finished_run_refuses_another_kind_and_an_unfinished_run_in_one_wording(tmp_path):
    store = ResultStore(tmp_path / "r.sqlite")
    running = store.get_or_create_run("toy", {"x": 1}, {"dataset": "demo:famous-vs-fresh", "model": "m"})
    with pytest.raises(LeakLensError, match=r"^Run \w+ is a 'toy' run, not a membership benchmark\.$"):
        finished_run(running, "mia", "a membership benchmark")
    with pytest.raises(LeakLensError) as refused:
        finished_run(running, "toy", "a toy run")
    assert str(refused.value) == (
        f"Run {running.run_id} (Famous vs fresh passages (demo)) is not finished (running); run the test again "
        "with the same data, model and settings to resume it."
    )
    done = store.finish_run(running.run_id, {})
    assert finished_run(done, "toy", "a toy run") == done
    assert data_name(done) == "Famous vs fresh passages (demo)"
