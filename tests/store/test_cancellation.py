"""Cancelling a run: it stops within one batch, keeps what is stored, and the next run scores only the rest.

A page's Cancel button works through Streamlit stopping the script at its next call (the progress update
after a stored batch) with a ``ScriptControlException``; a terminal's Ctrl-C raises ``KeyboardInterrupt``.
Both must leave the run interrupted and resumable.
"""

from __future__ import annotations

import pytest
from streamlit.runtime.scriptrunner_utils.exceptions import RerunException, StopException

from core.config import SHARED_DATA_DIR
from core.data.labelled import load_labelled_dataset
from core.engine.handle import resolve_model
from core.membership.benchmark import KIND, run_membership_benchmark
from core.methods import parse_methods
from core.store.results import FINISHED, INTERRUPTED, ResultStore, SampleRow
from core.store.runloop import RunRequest, run_resumable

DATA = SHARED_DATA_DIR


@pytest.fixture(scope="module")
def wikimia_ten():
    return load_labelled_dataset(str(DATA / "wikimia_length128.parquet"), limit=10, seed=3)


class StopAfter:
    """A progress callback that raises ``error`` once ``stop_at`` samples are done (as Streamlit does on Cancel)."""

    def __init__(self, stop_at: int, error: BaseException):
        self.stop_at, self.error = stop_at, error
        self.seen: list[int] = []

    def __call__(self, done: int, total: int) -> None:
        self.seen.append(done)
        if done >= self.stop_at:
            raise self.error


@pytest.mark.parametrize(
    "error",
    [RerunException(None), StopException(), KeyboardInterrupt()],
    ids=["streamlit-rerun", "streamlit-stop", "keyboard-interrupt"],
)
@pytest.mark.slow
def test_cancelled_membership_run_stops_within_a_batch_and_resumes_the_rest(tmp_path, tiny_lm, wikimia_ten, error):
    store = ResultStore(tmp_path / "r.sqlite")
    methods = parse_methods(["loss", "zlib"])

    def loader(spec):
        return tiny_lm

    stop = StopAfter(4, error)
    with pytest.raises(type(error)):
        run_membership_benchmark(
            wikimia_ten, resolve_model("tiny-random", loader=loader), methods, store=store, batch_size=2, progress=stop
        )
    assert stop.seen == [0, 2, 4]  # the stop came at the first progress update at or past 4: no batch more
    (run,) = store.list_runs(KIND)
    assert run.status == INTERRUPTED
    assert run.n_done == 4
    assert run.n_total == 10

    seen: list[tuple[int, int]] = []
    result = run_membership_benchmark(
        wikimia_ten,
        resolve_model("tiny-random", loader=loader),
        methods,
        store=store,
        batch_size=2,
        progress=lambda d, t: seen.append((d, t)),
    )
    assert result.n_computed == 6  # only the texts the cancelled run had not stored
    assert seen[0] == (4, 10)
    assert seen[-1] == (10, 10)
    (run,) = store.list_runs(KIND)
    assert run.status == FINISHED
    assert run.n_done == 10
    assert run.run_id == result.run_id

    fresh = run_membership_benchmark(
        wikimia_ten,
        resolve_model("tiny-random", loader=loader),
        methods,
        store=ResultStore(tmp_path / "f.sqlite"),
        batch_size=10,
    )
    for key in ("loss", "zlib"):  # resumed in pieces of 2 = scored in one go
        assert result.scores(key) == pytest.approx(fresh.scores(key), rel=1e-5)


def test_run_loop_never_scores_another_batch_after_a_cancel(tmp_path):
    store = ResultStore(tmp_path / "r.sqlite")
    ids = [f"s{i}" for i in range(9)]
    scored: list[list[int]] = []

    def score_batch(positions: list[int]) -> list[SampleRow]:
        scored.append(positions)
        return [SampleRow(ids[p], 0, {"x": float(p)}) for p in positions]

    request = RunRequest("demo", {"k": 1}, {"n_total": len(ids)})

    def cancel(done: int, total: int) -> None:
        if done >= 3:
            raise RerunException(None)

    with pytest.raises(RerunException):
        run_resumable(store, request, ids, score_batch, lambda rows: {}, batch_size=3, progress=cancel)
    assert scored == [[0, 1, 2]]
    run = store.find_run("demo", {"k": 1})
    assert run.status == INTERRUPTED
    assert run.n_done == 3

    scored.clear()
    outcome = run_resumable(store, request, ids, score_batch, lambda rows: {}, batch_size=3)
    assert scored == [[3, 4, 5], [6, 7, 8]]
    assert outcome.n_computed == 6
    assert outcome.run.finished
