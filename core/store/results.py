"""Persistent results: every run's per-sample scores in one local SQLite file.

Scoring a dataset is the expensive step, so its results are written batch by batch as they are computed:
an interrupted run resumes where it stopped, a finished run is read back instead of recomputed, and the
dashboard sees runs started from the command line. The store is generic: a run is any task (membership
benchmark, loss-delta test, multiple-choice test, ...) identified by a ``kind`` and a JSON ``key`` (data
fingerprint, model spec, method set, parameters); the same kind and key always map to the same run id.

The file uses SQLite's write-ahead log and every write is one short transaction, so a CLI run and the
dashboard (or two CLI runs) can write to it at the same time without corrupting each other.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import socket
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.config import cache_dir
from core.errors import LeakLensError
from core.files.outputs import os_error_cause

STORE_ENV_VAR = "LEAKLENS_STORE"
"""Path of the SQLite file; overrides ``<cache>/results.sqlite`` (tests point it at a temporary file)."""
DEFAULT_FILENAME = "results.sqlite"
SCHEMA_VERSION = 1
SQLITE_HEADER = b"SQLite format 3\x00"
STORE_SUFFIXES = (".sqlite", ".sqlite3", ".db")
"""Names an empty file may have and still be taken as a store not yet written (SQLite creates the file empty)."""
STALE_AFTER_S = 900.0
"""An unfinished run not written for this long counts as interrupted even if its process still lives."""

RUNNING, INTERRUPTED, FINISHED = "running", "interrupted", "finished"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS store_info (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    key_json TEXT NOT NULL,
    meta_json TEXT NOT NULL,
    dataset TEXT NOT NULL DEFAULT '',
    model TEXT NOT NULL DEFAULT '',
    n_total INTEGER,
    status TEXT NOT NULL,
    summary_json TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    finished_at REAL,
    owner_host TEXT NOT NULL DEFAULT '',
    owner_pid INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS runs_kind ON runs (kind);
CREATE TABLE IF NOT EXISTS samples (
    run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    sample_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    label INTEGER,
    scores_json TEXT NOT NULL,
    summary_json TEXT NOT NULL,
    written_at REAL NOT NULL,
    PRIMARY KEY (run_id, sample_id)
);
"""


LOW_SPACE_BYTES = 4 * 2**20
"""Below this much free space a failed SQLite write is reported as a full disk."""


class StoreError(LeakLensError):
    """The results file cannot be opened or written, or a run or key is invalid."""


class RunFinishedError(StoreError):
    """Samples were offered to a run that is already finished (e.g. by another process computing it too)."""


@dataclass(frozen=True)
class SampleRow:
    """One sample's results within a run."""

    sample_id: str
    label: int | None
    """1 = member, 0 = non-member, None when the task has no labels."""
    scores: Mapping[str, float | None] = field(default_factory=dict)
    """Score by method key; None (or NaN) where a method could not score the sample."""
    summary: dict[str, Any] = field(default_factory=dict)
    """Small per-sample facts worth keeping (token count, loss, ...); never full token records."""


@dataclass(frozen=True)
class RunInfo:
    """One stored run and where it stands."""

    run_id: str
    kind: str
    key: dict[str, Any]
    """What identifies the run (hashed to ``run_id``)."""
    meta: dict[str, Any]
    """Descriptive facts given at creation (display names, sizes, options)."""
    status: str
    """``running``, ``interrupted`` (stopped before finishing; resumable) or ``finished``."""
    n_done: int
    """Samples stored so far."""
    n_total: int | None
    """Samples the run will hold when finished, when known."""
    created_at: float
    updated_at: float
    finished_at: float | None
    summary: dict[str, Any] | None
    """What ``finish_run`` recorded (e.g. metrics); None until finished."""
    dataset: str = ""
    model: str = ""

    @property
    def finished(self) -> bool:
        return self.status == FINISHED

    def timestamp(self, which: str = "updated_at") -> str:
        """A timestamp as ``YYYY-MM-DD HH:MM:SS`` UTC, for tables."""
        value = getattr(self, which)
        if value is None:
            return ""
        return datetime.fromtimestamp(value, UTC).strftime("%Y-%m-%d %H:%M:%S")


def default_store_path() -> Path:
    """``$LEAKLENS_STORE`` when set, else ``<cache>/results.sqlite``."""
    override = os.environ.get(STORE_ENV_VAR)
    if override:
        return Path(override).expanduser()
    return cache_dir() / DEFAULT_FILENAME


def canonical_json(value: Any) -> str:
    """Key order and spacing fixed, so equal keys serialise (and hash) equally."""
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise StoreError(f"A run key must be plain JSON (strings, numbers, lists, dicts): {exc}.") from exc


def run_id_for(kind: str, key: Mapping[str, Any]) -> str:
    """The deterministic id of the run ``(kind, key)``: 24 hex digits of a sha256."""
    if not kind or not isinstance(kind, str):
        raise StoreError("A run needs a non-empty kind, e.g. 'mia'.")
    return hashlib.sha256(canonical_json({"kind": kind, "key": dict(key)}).encode()).hexdigest()[:24]


def _dumps(value: Any) -> str:
    # NaN / inf survive a round trip through Python's json (non-standard tokens, read back as floats).
    try:
        return json.dumps(value, ensure_ascii=False, default=_json_default)
    except (TypeError, ValueError) as exc:
        raise StoreError(f"Could not store a value as JSON: {exc}.") from exc


def _json_default(value: Any) -> Any:
    # numpy scalars and arrays, without importing numpy here
    if hasattr(value, "item") and callable(value.item) and getattr(value, "ndim", 0) == 0:
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def pid_alive(pid: int) -> bool:
    """Whether a process with this id runs on this machine (a run's or a build's owner), as far as we may ask."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class ResultStore:
    """Runs and their samples in one SQLite file; safe to use from several threads and processes.

    Every call opens its own short-lived connection, so one instance may be shared across threads and
    nothing stays locked between calls.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, timeout_s: float = 60.0) -> None:
        self.path = Path(path).expanduser() if path is not None else default_store_path()
        self.timeout_s = timeout_s
        self._schema_ready = False

    def __repr__(self) -> str:
        return f"ResultStore({str(self.path)!r})"

    # -- connections -------------------------------------------------------------------------------

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        if not self._schema_ready:
            self._refuse_foreign_file()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=self.timeout_s, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(
                f"Cannot open the results store {self.path}: {self._fault(exc)}. Choose a writable path."
            ) from exc
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.timeout_s * 1000)}")
            conn.execute("PRAGMA foreign_keys = ON")
            if not self._schema_ready:
                self._create_schema(conn)
            yield conn
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"The results store {self.path} could not be used: {self._fault(exc)}.") from exc
        finally:
            conn.close()

    def _fault(self, exc: BaseException) -> str:
        """SQLite's vague words for a full or read-only disk ("disk I/O error", "unable to open database
        file") replaced by the cause, read off the store's folder; other errors keep their own text."""
        if isinstance(exc, OSError):
            return os_error_cause(exc)
        try:
            disk = os.statvfs(self.path.parent)
        except OSError:
            return str(exc)
        if disk.f_flag & os.ST_RDONLY:
            return "its folder is on a read-only file system (copy the store to a writable folder)"
        if disk.f_bavail * disk.f_frsize < LOW_SPACE_BYTES and isinstance(exc, sqlite3.OperationalError):
            return f"no space left on the device ({str(exc)} with {disk.f_bavail * disk.f_frsize} bytes free)"
        return str(exc)

    def _refuse_foreign_file(self) -> None:
        """Before anything is written: the file must be new, an empty ``.sqlite`` file (what a LeakLens store is
        before its first write), or a LeakLens store of a schema this version reads. Anything else (a dataset, an
        overlap index's database, a newer store) is refused with the file left byte-identical: it is read here
        through a read-only connection, never switched to WAL or given tables."""
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return
        except OSError as exc:
            raise StoreError(f"Cannot open the results store {self.path}: {os_error_cause(exc)}.") from exc
        if self.path.is_dir():
            raise StoreError(f"The results store {self.path} is a folder; give a file path such as results.sqlite.")
        advice = "give a new path (or an existing LeakLens store) instead; the file was not changed"
        if size == 0:
            if self.path.suffix in STORE_SUFFIXES:
                return
            raise StoreError(
                f"{self.path} could not be used as a results store: it is an empty file, not a LeakLens results "
                f"store; {advice}."
            )
        try:
            with self.path.open("rb") as handle:
                header = handle.read(len(SQLITE_HEADER))
        except OSError as exc:
            raise StoreError(f"Cannot read the results store {self.path}: {os_error_cause(exc)}.") from exc
        if header != SQLITE_HEADER:
            raise StoreError(
                f"{self.path} could not be used as a results store: it is not an SQLite database; {advice}."
            )
        version = self._stored_schema_version()
        if version == "":
            return
        if version is None:
            raise StoreError(
                f"{self.path} could not be used as a results store: it is an SQLite database but not a LeakLens "
                f"results store (it has no store marker); {advice}."
            )
        if not version.isdigit():
            raise StoreError(
                f"{self.path} names a store schema {version!r} that no LeakLens writes; the file is damaged or not "
                f"a results store: {advice}."
            )
        if int(version) > SCHEMA_VERSION:
            raise StoreError(
                f"The results store {self.path} was written by a newer LeakLens (schema {version}; this one reads "
                f"{SCHEMA_VERSION}); upgrade LeakLens or point LEAKLENS_STORE at another file. The file was not "
                "changed."
            )
        if int(version) < SCHEMA_VERSION:
            raise StoreError(
                f"The results store {self.path} was written by an older LeakLens (schema {version}; this one reads "
                f"{SCHEMA_VERSION}); start a new store at another path. The file was not changed."
            )

    def _stored_schema_version(self) -> str | None:
        """The store marker's schema version through a read-only connection; None when there is no marker, ''
        for a database with no tables at all (a store another process is creating: its schema and marker are
        written in one transaction, so a reader sees either nothing or both)."""
        uri = f"{self.path.resolve().as_uri()}?mode=ro"
        try:
            conn = sqlite3.connect(uri, uri=True, timeout=self.timeout_s)
        except sqlite3.Error as exc:
            raise StoreError(f"Cannot open the results store {self.path}: {self._fault(exc)}.") from exc
        try:
            if conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0:
                return ""  # an empty database: another process has just created it and is writing its schema
            row = conn.execute("SELECT value FROM store_info WHERE name = 'schema_version'").fetchone()
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return None
            raise StoreError(f"The results store {self.path} could not be used: {self._fault(exc)}.") from exc
        except sqlite3.DatabaseError:
            return None
        finally:
            conn.close()
        return None if row is None else str(row[0]).strip()

    def _create_schema(self, conn: sqlite3.Connection) -> None:
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise StoreError(f"The results store {self.path} cannot use write-ahead logging (mode {mode}).")
        conn.execute("PRAGMA synchronous = NORMAL")
        with _transaction(conn):
            for statement in filter(None, (s.strip() for s in _SCHEMA.split(";"))):
                conn.execute(statement)
            row = conn.execute("SELECT value FROM store_info WHERE name = 'schema_version'").fetchone()
            if row is None:
                conn.execute(
                    "INSERT INTO store_info (name, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
                )
            elif str(row[0]).strip() != str(SCHEMA_VERSION):  # checked before opening; another process changed it
                raise StoreError(
                    f"The results store {self.path} has schema {row[0]!r}; this LeakLens reads {SCHEMA_VERSION}."
                )
        self._schema_ready = True

    # -- runs --------------------------------------------------------------------------------------

    def get_or_create_run(self, kind: str, key: Mapping[str, Any], meta: Mapping[str, Any] | None = None) -> RunInfo:
        """The run for ``(kind, key)``, created when new; an unfinished run is claimed by this process.

        ``meta`` is stored at creation: ``dataset``, ``model`` and ``n_total`` in it are shown in run
        lists. A finished run is returned untouched, so callers read its results instead of recomputing.
        """
        return self._open_run(kind, key, meta, take_over=True)[0]

    def claim_run(
        self, kind: str, key: Mapping[str, Any], meta: Mapping[str, Any] | None = None
    ) -> tuple[RunInfo, bool]:
        """Like ``get_or_create_run``, but a run another live process is computing stays its own.

        Returns ``(run, claimed)``: ``claimed`` is False when the run is finished or still being computed
        elsewhere (then the caller waits for it instead of doing the same work twice). A run whose owner
        died or went silent (``STALE_AFTER_S``) is taken over and resumed.
        """
        return self._open_run(kind, key, meta, take_over=False)

    def _open_run(
        self, kind: str, key: Mapping[str, Any], meta: Mapping[str, Any] | None, *, take_over: bool
    ) -> tuple[RunInfo, bool]:
        run_id = run_id_for(kind, key)
        meta = dict(meta or {})
        key_json = canonical_json(dict(key))
        meta_json = _dumps(meta)
        n_total = meta.get("n_total")
        if n_total is not None and (not isinstance(n_total, int) or n_total < 0):
            raise StoreError(f"meta['n_total'] must be a non-negative integer, got {n_total!r}.")
        now = time.time()
        me = (socket.gethostname(), os.getpid())
        claimed = True
        with self._connect() as conn, _transaction(conn):
            row = conn.execute(
                "SELECT status, updated_at, owner_host, owner_pid, dataset, meta_json FROM runs WHERE run_id = ?",
                (run_id,),
            ).fetchone()
            if row is not None:
                _remember_the_given_name(conn, run_id, meta, row[4], row[5])
            if row is None:
                conn.execute(
                    "INSERT INTO runs (run_id, kind, key_json, meta_json, dataset, model, n_total, status, "
                    "created_at, updated_at, owner_host, owner_pid) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        run_id,
                        kind,
                        key_json,
                        meta_json,
                        str(meta.get("dataset", "")),
                        str(meta.get("model", key.get("model", ""))),
                        n_total,
                        RUNNING,
                        now,
                        now,
                        *me,
                    ),
                )
            elif row[0] == FINISHED:
                claimed = False
            elif (
                not take_over
                and (row[2], row[3]) != me
                and _effective_status(row[0], row[1], row[2], row[3], now) == RUNNING
            ):
                claimed = False
            else:
                conn.execute(
                    "UPDATE runs SET status = ?, updated_at = ?, owner_host = ?, owner_pid = ? WHERE run_id = ?",
                    (RUNNING, now, *me, run_id),
                )
        return self._require_run(run_id), claimed

    def get_run(self, run_id: str) -> RunInfo | None:
        """The run with this id, or None."""
        runs = self._select_runs("WHERE r.run_id = ?", (run_id,))
        return runs[0] if runs else None

    def find_run(self, kind: str, key: Mapping[str, Any]) -> RunInfo | None:
        """The run for ``(kind, key)`` if it was ever created (never creates one)."""
        return self.get_run(run_id_for(kind, key))

    def list_runs(self, kind: str | None = None, *, model: str | None = None) -> list[RunInfo]:
        """Stored runs, newest first, optionally only of one kind and/or model."""
        clauses, params = [], []
        if kind is not None:
            clauses.append("r.kind = ?")
            params.append(kind)
        if model is not None:
            clauses.append("r.model = ?")
            params.append(model)
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        return self._select_runs(where, tuple(params))

    def finish_run(self, run_id: str, summary: Mapping[str, Any] | None = None) -> RunInfo:
        """Mark a run finished and keep its summary (e.g. metrics); it will never be recomputed."""
        now = time.time()
        with self._connect() as conn, _transaction(conn):
            cursor = conn.execute(
                "UPDATE runs SET status = ?, summary_json = ?, finished_at = ?, updated_at = ? WHERE run_id = ?",
                (FINISHED, _dumps(dict(summary or {})), now, now, run_id),
            )
            if cursor.rowcount == 0:
                raise StoreError(f"No stored run with id {run_id}.")
        return self._require_run(run_id)

    def mark_interrupted(self, run_id: str) -> None:
        """Record that an unfinished run stopped (it stays resumable); finished runs are left alone."""
        with self._connect() as conn, _transaction(conn):
            conn.execute(
                "UPDATE runs SET status = ?, updated_at = ? WHERE run_id = ? AND status != ?",
                (INTERRUPTED, time.time(), run_id, FINISHED),
            )

    def delete_run(self, run_id: str) -> bool:
        """Remove a run and its samples; False when there was no such run."""
        with self._connect() as conn, _transaction(conn):
            conn.execute("DELETE FROM samples WHERE run_id = ?", (run_id,))
            return conn.execute("DELETE FROM runs WHERE run_id = ?", (run_id,)).rowcount > 0

    # -- samples -----------------------------------------------------------------------------------

    def add_samples(self, run_id: str, rows: Sequence[SampleRow]) -> int:
        """Write one batch in one transaction (all of it or none); returns the run's stored sample count.

        A sample already stored under the same id is replaced, so a batch repeated after a crash is harmless.
        """
        rows = list(rows)
        ids = [str(r.sample_id) for r in rows]
        if len(set(ids)) != len(ids):
            raise StoreError("A batch holds the same sample id twice; sample ids must be unique within a run.")
        for r in rows:
            if r.label is not None and not isinstance(r.label, int):
                raise StoreError(f"Sample {r.sample_id}: the label must be an integer or None, got {r.label!r}.")
        now = time.time()
        payload = [
            (run_id, str(r.sample_id), r.label, _dumps(_plain_scores(r.scores)), _dumps(dict(r.summary)), now)
            for r in rows
        ]
        with self._connect() as conn, _transaction(conn):
            status = conn.execute("SELECT status FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            if status is None:
                raise StoreError(f"No stored run with id {run_id}; create it with get_or_create_run first.")
            if status[0] == FINISHED:
                raise RunFinishedError(f"Run {run_id} is finished; its samples cannot change.")
            start = conn.execute(
                "SELECT COALESCE(MAX(position), -1) + 1 FROM samples WHERE run_id = ?", (run_id,)
            ).fetchone()[0]
            conn.executemany(
                "INSERT INTO samples (run_id, sample_id, position, label, scores_json, summary_json, written_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, sample_id) DO UPDATE SET "
                "label = excluded.label, scores_json = excluded.scores_json, "
                "summary_json = excluded.summary_json, written_at = excluded.written_at",
                [(p[0], p[1], start + i, *p[2:]) for i, p in enumerate(payload)],
            )
            conn.execute(
                "UPDATE runs SET updated_at = ?, status = ?, owner_host = ?, owner_pid = ? WHERE run_id = ?",
                (now, RUNNING, socket.gethostname(), os.getpid(), run_id),
            )
            return int(conn.execute("SELECT COUNT(*) FROM samples WHERE run_id = ?", (run_id,)).fetchone()[0])

    def done_sample_ids(self, run_id: str) -> set[str]:
        """Ids of the samples already stored for the run (what a resumed run skips)."""
        with self._connect() as conn:
            return {r[0] for r in conn.execute("SELECT sample_id FROM samples WHERE run_id = ?", (run_id,))}

    def load_samples(self, run_id: str) -> list[SampleRow]:
        """Every stored sample of the run, in the order they were first written."""
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT sample_id, label, scores_json, summary_json FROM samples WHERE run_id = ? ORDER BY position",
                (run_id,),
            ).fetchall()
        return [
            SampleRow(sample_id=r[0], label=r[1], scores=_loads_scores(r[2]), summary=json.loads(r[3])) for r in rows
        ]

    # -- helpers -----------------------------------------------------------------------------------

    def _require_run(self, run_id: str) -> RunInfo:
        info = self.get_run(run_id)
        if info is None:
            raise StoreError(f"No stored run with id {run_id}.")
        return info

    def _select_runs(self, where: str, params: tuple[Any, ...]) -> list[RunInfo]:
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT r.run_id, r.kind, r.key_json, r.meta_json, r.dataset, r.model, r.n_total, r.status, "
                "r.summary_json, r.created_at, r.updated_at, r.finished_at, r.owner_host, r.owner_pid, "
                "(SELECT COUNT(*) FROM samples s WHERE s.run_id = r.run_id) "
                f"FROM runs r {where} ORDER BY r.created_at DESC, r.run_id",
                params,
            ).fetchall()
        now = time.time()
        return [
            RunInfo(
                run_id=r[0],
                kind=r[1],
                key=json.loads(r[2]),
                meta=json.loads(r[3]),
                dataset=r[4],
                model=r[5],
                n_total=r[6],
                status=_effective_status(r[7], r[10], r[12], r[13], now),
                summary=json.loads(r[8]) if r[8] is not None else None,
                created_at=r[9],
                updated_at=r[10],
                finished_at=r[11],
                n_done=int(r[14]),
            )
            for r in rows
        ]


def _remember_the_given_name(
    conn: sqlite3.Connection, run_id: str, given_meta: Mapping[str, Any], stored: str, stored_meta_json: str
) -> None:
    """A run reused for the same rows under another name (a copy, a renamed file) keeps the name and provenance
    of the call that computed it, and remembers the other names in ``also_given_as`` so its report names them."""
    given = str(given_meta.get("dataset", ""))
    if not given or given == stored:
        return
    meta = json.loads(stored_meta_json)
    others = list(meta.get("also_given_as", []))
    if given in others:
        return
    meta["also_given_as"] = [*others, given]
    conn.execute("UPDATE runs SET meta_json = ? WHERE run_id = ?", (_dumps(meta), run_id))


def _effective_status(stored: str, updated_at: float, host: str, pid: int, now: float) -> str:
    """A 'running' run whose process died (same machine) or that went silent counts as interrupted."""
    if stored != RUNNING:
        return stored
    if host == socket.gethostname() and not pid_alive(pid):
        return INTERRUPTED
    if now - updated_at > STALE_AFTER_S:
        return INTERRUPTED
    return RUNNING


def _plain_scores(scores: Mapping[str, Any]) -> dict[str, float | None]:
    plain: dict[str, float | None] = {}
    for name, value in scores.items():
        if value is None:
            plain[str(name)] = None
            continue
        try:
            plain[str(name)] = float(value)
        except (TypeError, ValueError) as exc:
            raise StoreError(f"Score {name!r} must be a number or None, got {value!r}.") from exc
    return plain


def _loads_scores(text: str) -> dict[str, float | None]:
    return {k: (None if v is None else float(v)) for k, v in json.loads(text).items()}


def score_or_nan(value: float | None) -> float:
    """A stored score as a float for metrics: None becomes NaN (which the metrics drop and count)."""
    return math.nan if value is None else float(value)


@contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` takes the write lock up front, so concurrent writers queue instead of deadlocking."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
