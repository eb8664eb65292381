"""Only a new path, an empty ``.sqlite`` file or a LeakLens store of this schema is taken as a results store:
anything else is refused in one line and left byte-identical (never switched to WAL, never given tables)."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from core.cli import main
from core.store.results import ResultStore, StoreError


def _sqlite(path: Path, *statements: str) -> None:
    conn = sqlite3.connect(path)
    for statement in statements:
        conn.execute(statement)
    conn.commit()
    conn.close()


def _store_with_version(version: str) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        _sqlite(
            path,
            "CREATE TABLE store_info (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
            f"INSERT INTO store_info VALUES ('schema_version', '{version}')",
        )

    return make


@dataclass(frozen=True)
class Foreign:
    name: str
    file_name: str
    make: Callable[[Path], None]
    expected: str


FOREIGN = [
    Foreign("an empty .jsonl", "data.jsonl", lambda p: p.write_bytes(b""), "is an empty file, not a LeakLens results"),
    Foreign("a dataset", "data.jsonl", lambda p: p.write_text('{"text": "a"}\n'), "not an SQLite database"),
    Foreign(
        "an overlap index's database",
        "index.sqlite",
        lambda p: _sqlite(p, "CREATE TABLE documents (id INTEGER PRIMARY KEY, text TEXT)"),
        "an SQLite database but not a LeakLens results store",
    ),
    Foreign("a newer store", "results.sqlite", _store_with_version("99"), "written by a newer LeakLens (schema 99"),
    Foreign("a schema of 'abc'", "results.sqlite", _store_with_version("abc"), "names a store schema 'abc'"),
    Foreign("an older store", "results.sqlite", _store_with_version("0"), "written by an older LeakLens (schema 0"),
]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("case", FOREIGN, ids=[c.name for c in FOREIGN])
def test_a_file_that_is_no_store_of_ours_is_refused_and_left_byte_identical(case: Foreign, tmp_path):
    path = tmp_path / case.file_name
    case.make(path)
    before = _digest(path)
    with pytest.raises(StoreError) as info:
        ResultStore(path).list_runs()
    assert case.expected in str(info.value)
    assert _digest(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [case.file_name]  # no -wal or -shm left beside it


@pytest.mark.parametrize("case", FOREIGN[:3], ids=[c.name for c in FOREIGN[:3]])
def test_the_cli_says_it_in_one_line(case: Foreign, tmp_path, capsys):
    path = tmp_path / case.file_name
    case.make(path)
    before = _digest(path)
    code = main(["report", "0", "--store", str(path), "--out", str(tmp_path / "r.html")])
    err = capsys.readouterr().err
    assert code == 2
    (line,) = [line for line in err.splitlines() if line.strip()]
    assert line.startswith("error: ") and case.expected in line and "Traceback" not in err
    assert _digest(path) == before


def test_a_new_path_an_empty_sqlite_file_and_our_own_store_are_used(tmp_path):
    assert ResultStore(tmp_path / "new.sqlite").list_runs() == []
    (tmp_path / "empty.sqlite").write_bytes(b"")
    assert ResultStore(tmp_path / "empty.sqlite").list_runs() == []
    again = ResultStore(tmp_path / "new.sqlite")  # a second opening reads the marker the first one wrote
    assert again.list_runs() == []


def test_a_store_another_process_is_still_creating_is_not_refused(tmp_path):
    """Between a first writer's switch to WAL (the file now has an SQLite header) and its schema transaction's
    commit, a second process sees a database with no tables at all: that is a store being created, not a
    foreign file, so the second process waits for it instead of refusing it."""
    path = tmp_path / "results.sqlite"
    creator = sqlite3.connect(path, isolation_level=None)
    creator.execute("PRAGMA journal_mode = WAL")
    assert path.read_bytes()[:16] == b"SQLite format 3\x00"
    assert ResultStore(path).list_runs() == []
    creator.close()
