"""The results store: deterministic run ids, resume, finished runs kept, concurrent writers, bad input."""

from __future__ import annotations

import math
import os
import sqlite3
import subprocess
import sys
import threading

import pytest

from core.config import PROJECT_ROOT
from core.store.results import (
    FINISHED,
    INTERRUPTED,
    RUNNING,
    ResultStore,
    SampleRow,
    StoreError,
    default_store_path,
    run_id_for,
)
from tests.helpers.store import n_remaining

REPO = PROJECT_ROOT
KEY = {"dataset": "abc123", "model": "tiny-random", "methods": ["loss", "zlib"]}
META = {"dataset": "wikimia.parquet", "model": "tiny-random", "n_total": 10}


def _rows(ids, offset=0.0):
    return [SampleRow(str(i), i % 2, {"loss": -float(i) - offset, "zlib": float(i) / 10}, {"n_tokens": i}) for i in ids]


def test_schema_created_on_first_use(tmp_path):
    path = tmp_path / "sub" / "results.sqlite"
    store = ResultStore(path)
    assert not path.exists()  # nothing happens before the first call
    assert store.list_runs() == []
    assert path.exists()
    with sqlite3.connect(path) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert {"runs", "samples", "store_info"} <= tables
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT value FROM store_info WHERE name = 'schema_version'").fetchone()[0] == "1"


def test_default_path_honours_env(tmp_path, monkeypatch):
    monkeypatch.setenv("LEAKLENS_STORE", str(tmp_path / "x.sqlite"))
    assert default_store_path() == tmp_path / "x.sqlite"
    assert ResultStore().path == tmp_path / "x.sqlite"
    monkeypatch.delenv("LEAKLENS_STORE")
    monkeypatch.setenv("LEAKLENS_CACHE", str(tmp_path / "cache"))
    assert default_store_path() == tmp_path / "cache" / "results.sqlite"


def test_run_id_is_deterministic_and_order_free():
    same = {"methods": ["loss", "zlib"], "model": "tiny-random", "dataset": "abc123"}
    assert run_id_for("mia", KEY) == run_id_for("mia", same)
    assert len(run_id_for("mia", KEY)) == 24
    assert run_id_for("mia", KEY) != run_id_for("loss_delta", KEY)
    assert run_id_for("mia", KEY) != run_id_for("mia", {**KEY, "methods": ["zlib", "loss"]})
    with pytest.raises(StoreError, match="plain JSON"):
        run_id_for("mia", {"x": object()})
    with pytest.raises(StoreError, match="kind"):
        run_id_for("", KEY)


def test_create_add_finish_roundtrip(tmp_path):
    store = ResultStore(tmp_path / "r.sqlite")
    run = store.get_or_create_run("mia", KEY, META)
    assert run.run_id == run_id_for("mia", KEY)
    assert (run.status, run.n_done, run.n_total) == (RUNNING, 0, 10)
    assert (run.dataset, run.model) == ("wikimia.parquet", "tiny-random")
    assert run.key == KEY
    assert run.meta == META
    assert run.summary is None
    assert store.add_samples(run.run_id, _rows(range(4))) == 4
    rows = store.load_samples(run.run_id)
    assert [r.sample_id for r in rows] == ["0", "1", "2", "3"]
    assert rows[3] == SampleRow("3", 1, {"loss": -3.0, "zlib": 0.3}, {"n_tokens": 3})
    done = store.finish_run(run.run_id, {"auroc": {"loss": 0.75}})
    assert done.status == FINISHED
    assert done.finished
    assert done.summary == {"auroc": {"loss": 0.75}}
    assert done.finished_at is not None
    assert done.finished_at >= done.created_at
    assert len(done.timestamp("finished_at")) == 19


def test_missing_scores_and_nan_round_trip(tmp_path):
    store = ResultStore(tmp_path / "r.sqlite")
    run = store.get_or_create_run("mia", KEY, META)
    store.add_samples(run.run_id, [SampleRow("a", 0, {"loss": None, "zlib": math.nan, "x": math.inf})])
    (row,) = store.load_samples(run.run_id)
    assert row.scores["loss"] is None
    assert math.isnan(row.scores["zlib"])
    assert row.scores["x"] == math.inf
    assert row.label == 0
    assert row.summary == {}


def test_resume_after_interruption_writes_only_missing(tmp_path):
    path = tmp_path / "r.sqlite"
    ids = [f"s{i}" for i in range(10)]
    first = ResultStore(path)
    run = first.get_or_create_run("mia", KEY, META)
    for batch in (ids[0:3], ids[3:5]):  # two batches, then the "process" stops
        first.add_samples(run.run_id, [SampleRow(i, 1, {"loss": 1.0}) for i in batch])
    first.mark_interrupted(run.run_id)
    assert first.get_run(run.run_id).status == INTERRUPTED

    reopened = ResultStore(path)  # a new process would start from here
    again = reopened.get_or_create_run("mia", KEY, META)
    assert again.run_id == run.run_id
    assert again.status == RUNNING
    assert again.n_done == 5
    missing = [i for i in ids if i not in reopened.done_sample_ids(again.run_id)]
    assert missing == ids[5:]
    reopened.add_samples(again.run_id, [SampleRow(i, 0, {"loss": 2.0}) for i in missing])
    loaded = reopened.load_samples(again.run_id)
    assert [r.sample_id for r in loaded] == ids
    assert [r.label for r in loaded] == [1] * 5 + [0] * 5
    assert n_remaining(reopened.get_run(run.run_id)) == 0


def test_dead_owner_reads_as_interrupted(tmp_path):
    path = tmp_path / "r.sqlite"
    script = (
        "from core.store.results import ResultStore, SampleRow\n"
        f"s = ResultStore({str(path)!r})\n"
        f"r = s.get_or_create_run('mia', {KEY!r}, {META!r})\n"
        "s.add_samples(r.run_id, [SampleRow('a', 1, {'loss': 1.0})])\n"
    )
    subprocess.run([sys.executable, "-c", script], cwd=REPO, check=True, timeout=60)
    (run,) = ResultStore(path).list_runs()
    assert run.status == INTERRUPTED
    assert run.n_done == 1  # the writer exited without finishing


def test_finished_run_is_kept_and_never_reopened(tmp_path):
    store = ResultStore(tmp_path / "r.sqlite")
    run = store.get_or_create_run("mia", KEY, META)
    store.add_samples(run.run_id, _rows(range(3)))
    store.finish_run(run.run_id, {"n": 3})
    again = store.get_or_create_run("mia", KEY, {**META, "n_total": 99})
    assert again.status == FINISHED
    assert again.n_total == 10
    assert again.summary == {"n": 3}
    store.mark_interrupted(run.run_id)
    assert store.get_run(run.run_id).status == FINISHED
    with pytest.raises(StoreError, match="finished"):
        store.add_samples(run.run_id, _rows([7]))
    assert store.done_sample_ids(run.run_id) == {"0", "1", "2"}


def test_rewriting_a_sample_replaces_it(tmp_path):
    store = ResultStore(tmp_path / "r.sqlite")
    run = store.get_or_create_run("mia", KEY, META)
    store.add_samples(run.run_id, _rows(range(3)))
    assert store.add_samples(run.run_id, _rows([1], offset=100.0)) == 3
    rows = store.load_samples(run.run_id)
    assert [r.sample_id for r in rows] == ["0", "1", "2"]  # keeps its first position
    assert rows[1].scores["loss"] == -101.0


def test_failed_batch_writes_nothing(tmp_path):
    store = ResultStore(tmp_path / "r.sqlite")
    run = store.get_or_create_run("mia", KEY, META)
    with pytest.raises(StoreError, match="twice"):
        store.add_samples(run.run_id, [SampleRow("a", 1), SampleRow("a", 0)])
    with pytest.raises(StoreError, match="number"):
        store.add_samples(run.run_id, [SampleRow("b", 1, {"loss": 1.0}), SampleRow("c", 1, {"loss": "high"})])
    with pytest.raises(StoreError, match="label"):
        store.add_samples(run.run_id, [SampleRow("d", "member")])  # type: ignore[arg-type]
    assert store.done_sample_ids(run.run_id) == set()
    with pytest.raises(StoreError, match="No stored run"):
        store.add_samples("0" * 24, _rows([1]))
    with pytest.raises(StoreError, match="n_total"):
        store.get_or_create_run("mia", {"other": 1}, {"n_total": -3})


def test_list_filter_and_delete(tmp_path):
    store = ResultStore(tmp_path / "r.sqlite")
    a = store.get_or_create_run("mia", KEY, META)
    b = store.get_or_create_run("mia", {**KEY, "model": "smollm2-135m"}, {**META, "model": "smollm2-135m"})
    c = store.get_or_create_run("mcq", {"questions": "q1"}, {"dataset": "mmlu", "model": "tiny-random"})
    store.add_samples(b.run_id, _rows(range(2)))
    assert {r.run_id for r in store.list_runs()} == {a.run_id, b.run_id, c.run_id}
    assert {r.run_id for r in store.list_runs("mia")} == {a.run_id, b.run_id}
    assert [r.run_id for r in store.list_runs(model="smollm2-135m")] == [b.run_id]
    assert [r.run_id for r in store.list_runs("mcq", model="tiny-random")] == [c.run_id]
    assert store.delete_run(b.run_id) is True
    assert store.delete_run(b.run_id) is False
    assert store.get_run(b.run_id) is None
    assert store.load_samples(b.run_id) == []
    assert store.find_run("mia", KEY).run_id == a.run_id
    assert store.find_run("mia", {"nope": 1}) is None


def test_unreadable_file_gives_store_error(tmp_path):
    path = tmp_path / "r.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="could not be used|Cannot open"):
        ResultStore(path).list_runs()
    directory = tmp_path / "adir"
    directory.mkdir()
    with pytest.raises(StoreError):
        ResultStore(directory).list_runs()


def test_concurrent_threads_do_not_corrupt(tmp_path):
    store = ResultStore(tmp_path / "r.sqlite")
    runs = [store.get_or_create_run("mia", {**KEY, "writer": w}, META) for w in range(4)]
    errors: list[BaseException] = []

    def write(run_id: str, writer: int) -> None:
        try:
            for batch in range(10):
                rows = [SampleRow(f"{batch}-{i}", writer % 2, {"loss": float(writer)}) for i in range(5)]
                store.add_samples(run_id, rows)
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(r.run_id, w)) for w, r in enumerate(runs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for w, r in enumerate(runs):
        rows = store.load_samples(r.run_id)
        assert len(rows) == 50
        assert {row.scores["loss"] for row in rows} == {float(w)}
    with sqlite3.connect(store.path) as conn:
        for r in runs:
            positions = [p for (p,) in conn.execute("SELECT position FROM samples WHERE run_id = ?", (r.run_id,))]
            assert sorted(positions) == list(range(50))


_WRITER = """
import sys
from core.store.results import ResultStore, SampleRow
path, writer = sys.argv[1], int(sys.argv[2])
store = ResultStore(path)
shared = store.get_or_create_run("mia", {"shared": True}, {"n_total": 120})
own = store.get_or_create_run("mia", {"writer": writer}, {"n_total": 60})
for batch in range(20):
    store.add_samples(own.run_id, [SampleRow(f"{batch}-{i}", i % 2, {"loss": float(writer)}) for i in range(3)])
    store.add_samples(shared.run_id, [SampleRow(f"{writer}-{batch}-{i}", 1, {"loss": 1.0}) for i in range(2)])
store.finish_run(own.run_id, {"writer": writer})
"""


def test_concurrent_processes_do_not_corrupt(tmp_path):
    path = tmp_path / "r.sqlite"
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(path), str(w)], cwd=REPO, stderr=subprocess.PIPE)
        for w in range(3)
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
    store = ResultStore(path)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    runs = {tuple(r.key.items()): r for r in store.list_runs("mia")}
    assert len(runs) == 4
    shared = runs[(("shared", True),)]
    assert shared.n_done == 120
    for w in range(3):
        own = runs[(("writer", w),)]
        assert own.status == FINISHED
        assert own.n_done == 60
        assert own.summary == {"writer": w}
        assert {r.scores["loss"] for r in store.load_samples(own.run_id)} == {float(w)}
    assert os.path.getsize(path) > 0
