"""The default backend: an on-disk index per name, no server.

Layout of ``<root>/<name>/``: ``index.sqlite`` (documents, plus hashed word n-gram postings for text
indexes), ``vectors.npy`` (unit embeddings, vector indexes) and ``meta.json``. A build fills a hidden
``.<name>.building-*`` folder and takes the name only when finished (``meta.json`` says ``complete``), so
an index is never left half-built under its name; folders of builds whose process died are removed by the
next build of that name. Lookups are exact:
every document sharing an n-gram with a query is a candidate, and vector search compares against every
document. SQLite and numpy ship with Python's scientific stack, keep one file per index, and need no
service; their measured speed against Elasticsearch is in docs/benchmarks.md (Overlap search).
"""

from __future__ import annotations

import builtins
import json
import os
import shutil
import sqlite3
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from core.config import cache_subdir
from core.errors import DataError
from core.files.outputs import atomic_output, os_error_cause, write_atomic
from core.overlap.backends.base import (
    Candidates,
    IndexInfo,
    IndexWriter,
    OverlapBackend,
    StoredDoc,
    VectorHit,
    check_index_name,
    check_index_type,
)
from core.overlap.sources import Document
from core.overlap.tokenize import gram_hash, joined, ngrams, word_tokens
from core.store.results import pid_alive

_SQL_CHUNK = 900
"""Parameters per ``IN (...)`` query, below SQLite's default limit."""


_OWNER = "building.pid"
"""In a build folder: the id of the process building it, so a later build can tell it was abandoned."""


def default_index_root() -> Path:
    return cache_subdir("indexes")


class EmbeddedBackend(OverlapBackend):
    kind = "embedded"

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root) if root is not None else default_index_root()
        self.root.mkdir(parents=True, exist_ok=True)
        self._vector_cache: dict[str, tuple[float, np.ndarray]] = {}

    # -- management ---------------------------------------------------------------------------------
    def create(
        self,
        name: str,
        index_type: str,
        *,
        sources: list[dict[str, Any]],
        ngram_size: int,
        model: str | None = None,
        dims: int | None = None,
        overwrite: bool = False,
    ) -> IndexWriter:
        name = check_index_name(name)
        check_index_type(index_type)
        if ngram_size < 1:
            raise DataError("The n-gram size must be at least 1.")
        if (self.root / name).exists() and not overwrite:
            raise DataError(f"An embedded index named '{name}' already exists; delete it first or pass --overwrite.")
        self._remove_abandoned_builds(name)
        meta = {
            "name": name,
            "index_type": index_type,
            "ngram_size": ngram_size if index_type == "text" else None,
            "model": model,
            "dims": dims,
            "sources": sources,
        }
        return _EmbeddedWriter(self, name, meta)

    def _remove_abandoned_builds(self, name: str) -> None:
        """Delete build folders of ``name`` left by processes that died mid-build (their pid is gone)."""
        for path in self.root.glob(f".{name}.building-*"):
            try:
                pid = int((path / _OWNER).read_text())
            except (OSError, ValueError):
                pid = 0
            if not pid_alive(pid):
                shutil.rmtree(path, ignore_errors=True)

    def _dir(self, name: str) -> Path:
        path = self.root / check_index_name(name)
        if not (path / "meta.json").is_file():
            raise self.missing_index_error(name)
        return path

    def list(self) -> list[IndexInfo]:
        infos = []
        for path in sorted(self.root.iterdir()):
            if not path.name.startswith(".") and (path / "meta.json").is_file():
                infos.append(self.info(path.name))
        return infos

    def info(self, name: str) -> IndexInfo:
        """The index's description from its ``meta.json``; one that cannot be read (empty, not JSON, entries
        missing) is described as ``unreadable``, naming the file and the cause, so listing the others goes on."""
        path = self._dir(name)
        size = sum(f.stat().st_size for f in path.iterdir() if f.is_file())
        meta_path = path / "meta.json"
        try:
            meta = _read_meta(meta_path)
            return IndexInfo(
                name=str(meta["name"]),
                backend=self.kind,
                index_type=str(meta["index_type"]),
                n_docs=int(meta["n_docs"]),
                datasets=dict(meta["datasets"]),
                size_bytes=size,
                ngram_size=meta.get("ngram_size"),
                model=meta.get("model"),
                sources=list(meta.get("sources") or []),
                complete=bool(meta.get("complete", True)),
            )
        except _Unreadable as exc:
            cause = str(exc)
        except KeyError as exc:
            cause = f"{meta_path} has no {exc.args[0]!r} entry"
        except (TypeError, ValueError) as exc:
            cause = f"{meta_path} holds a value of the wrong kind ({exc})"
        return IndexInfo(
            name=path.name,
            backend=self.kind,
            index_type="unknown",
            n_docs=0,
            datasets={},
            size_bytes=size,
            complete=False,
            unreadable=cause,
        )

    def index_flags(self) -> str:
        flags = f"--backend {self.kind}"
        return flags if self.root == default_index_root() else f"{flags} --index-dir {self.root}"

    def delete(self, name: str) -> None:
        path = self._dir(name)
        self._vector_cache.pop(name, None)
        shutil.rmtree(path)

    @contextmanager
    def _connect(self, name: str) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(f"file:{self._dir(name) / 'index.sqlite'}?mode=ro", uri=True)
        try:
            yield db
        finally:
            db.close()

    # -- lookups --------------------------------------------------------------------------------------
    def ngram_candidates(
        self, name: str, queries: Sequence[Sequence[tuple[str, ...]]], datasets: Sequence[str], search_size: int
    ) -> Candidates:
        info = self.searchable_info(name)
        n = self._text_ngram_size(info)
        ids: list[list[int]] = []
        with self._connect(name) as db:
            for grams in queries:
                if any(len(g) < n for g in grams):
                    raise DataError(
                        f"Index '{name}' stores {n}-grams; search with an n-gram size of at least {n} "
                        f"or rebuild the index with --ngram-size {min(len(g) for g in grams)}."
                    )
                # A document holding an N-gram (N >= n) holds its leading n-gram: exact candidate set.
                hashes = sorted({gram_hash(g[:n]) for g in grams})
                ids.append(self._docs_with_hashes(db, hashes))
            docs = self._fetch(db, {i for row in ids for i in row}, datasets)
        return Candidates([[i for i in row if i in docs] for row in ids], docs)

    def phrase_candidates(
        self, name: str, phrases: Sequence[tuple[str, ...]], datasets: Sequence[str], search_size: int
    ) -> Candidates:
        info = self.searchable_info(name)
        n = info.ngram_size or 0
        ids: list[list[int]] = []
        with self._connect(name) as db:
            for phrase in phrases:
                needle = f" {joined(phrase)} "
                if info.index_type == "text" and len(phrase) >= n:
                    pool = self._docs_with_hashes(db, [gram_hash(phrase[:n])])
                    rows = self._rows(db, "SELECT id FROM docs WHERE instr(tokens, ?) > 0 AND id IN ({})", pool, needle)
                else:
                    rows = [r[0] for r in db.execute("SELECT id FROM docs WHERE instr(tokens, ?) > 0", (needle,))]
                ids.append(sorted(rows))
            docs = self._fetch(db, {i for row in ids for i in row}, datasets)
        return Candidates([[i for i in row if i in docs] for row in ids], docs)

    def vector_search(
        self, name: str, vectors: np.ndarray, dataset: str, k: int, min_similarity: float | None = None
    ) -> builtins.list[builtins.list[VectorHit]]:
        info = self.searchable_info(name)
        if info.index_type != "vector":
            raise DataError(f"Index '{name}' is a {info.index_type} index; vector search needs a vector index.")
        matrix = self._vectors(name)
        with self._connect(name) as db:
            doc_ids = np.array(
                [r[0] for r in db.execute("SELECT id FROM docs WHERE dataset = ? ORDER BY id", (dataset,))]
            )
            if doc_ids.size == 0:
                return [[] for _ in range(len(vectors))]
            sims = np.asarray(vectors, dtype=np.float32) @ matrix[doc_ids].T
            chosen: list[list[tuple[int, float]]] = []
            for row in sims:
                order = np.lexsort((doc_ids, -row))[:k]
                hits = [(int(doc_ids[j]), float(row[j])) for j in order]
                if min_similarity is not None:
                    hits = [h for h in hits if h[1] >= min_similarity]
                chosen.append(hits)
            docs = self._fetch(db, {i for row in chosen for i, _ in row}, [dataset])
        return [[VectorHit(docs[i], s) for i, s in row] for row in chosen]

    # -- helpers ---------------------------------------------------------------------------------------
    @staticmethod
    def _text_ngram_size(info: IndexInfo) -> int:
        if info.index_type != "text" or not info.ngram_size:
            raise DataError(f"Index '{info.name}' is a {info.index_type} index; n-gram search needs a text index.")
        return int(info.ngram_size)

    @staticmethod
    def _docs_with_hashes(db: sqlite3.Connection, hashes: Sequence[int]) -> builtins.list[int]:
        found: set[int] = set()
        for start in range(0, len(hashes), _SQL_CHUNK):
            chunk = list(hashes[start : start + _SQL_CHUNK])
            marks = ",".join("?" * len(chunk))
            found.update(r[0] for r in db.execute(f"SELECT DISTINCT doc FROM grams WHERE hash IN ({marks})", chunk))
        return sorted(found)

    @staticmethod
    def _rows(db: sqlite3.Connection, sql: str, ids: Sequence[int], *first: Any) -> builtins.list[int]:
        out: list[int] = []
        for start in range(0, len(ids), _SQL_CHUNK):
            chunk = list(ids[start : start + _SQL_CHUNK])
            out.extend(r[0] for r in db.execute(sql.format(",".join("?" * len(chunk))), (*first, *chunk)))
        return out

    @staticmethod
    def _fetch(db: sqlite3.Connection, ids: set[int], datasets: Sequence[str]) -> dict[int, StoredDoc]:
        wanted = set(datasets)
        docs: dict[int, StoredDoc] = {}
        ordered = sorted(ids)
        for start in range(0, len(ordered), _SQL_CHUNK):
            chunk = ordered[start : start + _SQL_CHUNK]
            marks = ",".join("?" * len(chunk))
            for doc_id, dataset, row, turn, text in db.execute(
                f"SELECT id, dataset, row, turn, text FROM docs WHERE id IN ({marks})", chunk
            ):
                if not wanted or dataset in wanted:
                    docs[doc_id] = StoredDoc(doc_id, dataset, row, turn, text)
        return docs

    def _vectors(self, name: str) -> np.ndarray:
        path = self._dir(name) / "vectors.npy"
        stamp = path.stat().st_mtime
        cached = self._vector_cache.get(name)
        if cached is None or cached[0] != stamp:
            cached = (stamp, np.load(path, mmap_mode="r"))
            self._vector_cache[name] = cached
        return cached[1]


class _Unreadable(Exception):
    """An index's ``meta.json`` could not be read; the message names the file and the cause."""


def _read_meta(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise _Unreadable(f"{path} could not be read ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise _Unreadable(f"{path} is not UTF-8 text") from exc
    if not text.strip():
        raise _Unreadable(f"{path} is empty")
    try:
        meta = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _Unreadable(f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from exc
    if not isinstance(meta, dict):
        raise _Unreadable(f"{path} does not hold a JSON object")
    return meta


def _unwritable(name: str, root: Path, exc: Exception) -> DataError:
    """A build that cannot write its files (a full disk, a read-only folder) in one line; the index of that name
    from before, if any, is untouched: a build writes beside it and takes the name only when complete."""
    if isinstance(exc, OSError):
        cause = os_error_cause(exc)
    elif "full" in str(exc):
        cause = "no space left on the device"
    elif "readonly" in str(exc) or "read-only" in str(exc):
        cause = "its folder is on a read-only file system"
    else:
        cause = str(exc)
    return DataError(
        f"Cannot write the index '{name}' in {root}: {cause}. Free some space there or choose another --index-dir; "
        "an index of that name from before is kept as it was."
    )


@contextmanager
def _writing(name: str, root: Path) -> Iterator[None]:
    try:
        yield
    except (OSError, sqlite3.Error) as exc:
        raise _unwritable(name, root, exc) from exc


class _EmbeddedWriter(IndexWriter):
    def __init__(self, backend: EmbeddedBackend, name: str, meta: dict[str, Any]) -> None:
        self.backend = backend
        self.name = name
        self.meta = meta
        self.tmp = backend.root / f".{name}.building-{uuid.uuid4().hex[:8]}"
        try:
            self._start()
        except BaseException:
            shutil.rmtree(self.tmp, ignore_errors=True)  # nothing of a build that could not start is left
            raise
        self.n_docs = 0
        self.datasets: dict[str, int] = {}
        self.vectors: list[np.ndarray] = []

    def _start(self) -> None:
        with _writing(self.name, self.backend.root):
            self.tmp.mkdir(parents=True)
            write_atomic(self.tmp / _OWNER, str(os.getpid()))
            self.db = sqlite3.connect(self.tmp / "index.sqlite")
            self.db.executescript(
                """
                PRAGMA journal_mode = OFF;
                PRAGMA synchronous = OFF;
                CREATE TABLE docs (id INTEGER PRIMARY KEY, dataset TEXT NOT NULL, row INTEGER NOT NULL,
                                   turn INTEGER, text TEXT NOT NULL, tokens TEXT NOT NULL);
                CREATE TABLE grams (hash INTEGER NOT NULL, doc INTEGER NOT NULL);
                """
            )

    def add(self, docs: Sequence[Document], vectors: np.ndarray | None = None) -> None:
        is_vector = self.meta["index_type"] == "vector"
        if is_vector and (vectors is None or len(vectors) != len(docs)):
            raise ValueError("a vector index needs one vector per document")
        n = self.meta["ngram_size"]
        doc_rows: list[tuple[int, str, int, int | None, str, str]] = []
        gram_rows: list[tuple[int, int]] = []
        for doc in docs:
            tokens = word_tokens(doc.text)
            doc_id = self.n_docs
            doc_rows.append((doc_id, doc.dataset, doc.row, doc.turn, doc.text, f" {joined(tokens)} "))
            if not is_vector and len(tokens) >= n:
                gram_rows.extend((h, doc_id) for h in {gram_hash(g) for g in ngrams(tokens, n)})
            self.n_docs += 1
            self.datasets[doc.dataset] = self.datasets.get(doc.dataset, 0) + 1
        with _writing(self.name, self.backend.root):
            self.db.executemany("INSERT INTO docs VALUES (?, ?, ?, ?, ?, ?)", doc_rows)
            self.db.executemany("INSERT INTO grams VALUES (?, ?)", gram_rows)
        if is_vector:
            self.vectors.append(np.asarray(vectors, dtype=np.float32))

    def close(self) -> IndexInfo:
        with _writing(self.name, self.backend.root):
            self.db.execute("CREATE INDEX grams_by_hash ON grams (hash, doc)")
            self.db.commit()
            self.db.close()
            if self.meta["index_type"] == "vector":
                dims = self.meta.get("dims") or 0
                matrix = np.concatenate(self.vectors) if self.vectors else np.zeros((0, dims), np.float32)
                with atomic_output(self.tmp / "vectors.npy", binary=True) as handle:
                    np.save(handle, matrix)
            meta = {**self.meta, "n_docs": self.n_docs, "datasets": self.datasets, "complete": True}
            write_atomic(self.tmp / "meta.json", json.dumps(meta, indent=2))
            (self.tmp / _OWNER).unlink()
        # The finished build takes the name with two renames; the old index is deleted only after.
        final = self.backend.root / self.name
        replaced = self.backend.root / f".{self.name}.replaced-{uuid.uuid4().hex[:8]}"
        if final.exists():
            final.rename(replaced)
        self.tmp.rename(final)
        shutil.rmtree(replaced, ignore_errors=True)
        self.backend._vector_cache.pop(self.name, None)
        return self.backend.info(self.name)

    def abort(self) -> None:
        try:
            self.db.close()
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)
