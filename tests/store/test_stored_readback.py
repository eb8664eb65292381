"""Issue 25, items 6 and 7: environment faults around overlap indexes and test sets, and stored runs read
back for a new command.

* A broken index (an empty or invalid ``meta.json``) is listed as unreadable beside the others and refused
  by a search with one ``error:`` line naming the file and what to do; a test row without its ``--id-col``
  value and a first training row without the text field are skipped like any other row, by their line.
* A run is keyed by content, so the same rows under another file name are read back from the store: the
  command's stdout and ``--out`` (provenance included) describe *this* command, while the stored run keeps
  the provenance of the call that computed it.
* Every model-using command's ``--out`` provenance names each model role's identity and start token.

The real CLI runs in its own interpreter, offline, two at a time (each start costs seconds on a small
machine); checks that need no CLI run in-process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from core.config import PROJECT_ROOT
from core.data.tables import SkippedRow, Table
from core.errors import DataError
from core.overlap.backends.embedded import EmbeddedBackend
from core.overlap.indexing import build_index
from core.overlap.sources import TrainingReader, TrainingSource, eval_set_from_table, skipped_note
from core.store.results import ResultStore

REPO = PROJECT_ROOT
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_WAIT_POLICY": "PASSIVE"}
TRAIN_ROWS = [
    {"id": "t1", "title": "the first row has no text field at all"},
    {"id": "t2", "text": "the quick brown fox jumps over the lazy dog near the river bank today"},
    {"id": "t3", "text": "a second training document long enough to hold several word eight grams"},
]
TEST_ROWS = [
    {"id": "q1", "text": "the quick brown fox jumps over the lazy dog near the river bank today"},
    {"text": "a second training document long enough to hold several word eight grams"},
    {"id": "q3", "text": "a fresh test item that shares nothing with the training documents above"},
]


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _cli(argv: list[str], cache: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, **OFFLINE, "LEAKLENS_CACHE": str(cache), "LEAKLENS_STORE": str(cache / "default.sqlite")}
    return subprocess.run(
        [sys.executable, "-m", "core", *argv], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )


def _walk_strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _walk_strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _walk_strings(v)]
    return [value] if isinstance(value, str) else []


# --- (a) overlap indexes and test sets: environment faults, through the real CLI -------------------------


@dataclass(frozen=True)
class Check:
    name: str
    run: str
    """Which CLI run of ``OVERLAP_RUNS`` it looks at."""
    rc: int
    error: tuple[str, ...] = ()
    """Substrings of the one ``error:`` line (rc 2)."""
    warning: tuple[str, ...] = ()
    """Substrings of one ``warning:`` line."""
    stdout: tuple[str, ...] = ()
    """Substrings of stdout lines: each tuple item is a line fragment, matched to some line."""
    line_with: tuple[str, tuple[str, ...]] | None = None
    """(a fragment picking a stdout line, substrings that line must hold)."""


OVERLAP_RUNS: dict[str, list[str]] = {
    "index": [
        "overlap",
        "index",
        "--name",
        "first-row",
        "--dataset",
        "{tmp}/train.jsonl",
        "--index-dir",
        "{tmp}/fresh-indexes",
    ],
    "search-id": [
        "overlap",
        "search",
        "--index",
        "good",
        "--dataset",
        "{tmp}/test.jsonl",
        "--id-col",
        "id",
        "--index-dir",
        "{tmp}/indexes",
        "--output-dir",
        "{tmp}/out-id",
    ],
    "search-broken": [
        "overlap",
        "search",
        "--index",
        "broken-empty",
        "--dataset",
        "{tmp}/test.jsonl",
        "--index-dir",
        "{tmp}/indexes",
        "--output-dir",
        "{tmp}/out-broken",
    ],
    "list": ["overlap", "list", "--index-dir", "{tmp}/indexes"],
}

OVERLAP_CHECKS = [
    Check(
        "index: first training row without the text field is skipped by its line",
        "index",
        0,
        warning=("train: skipped 1 row (lines 1 (id t1)): no text in field 'text'",),
        stdout=("first-row (embedded, text): 2 documents", "train: 2 documents from 3 rows"),
    ),
    Check(
        "search: test row without its --id-col value is skipped by its line",
        "search-id",
        0,
        warning=("test: skipped 1 row (lines 2): no value in id field 'id'",),
        stdout=("test in good: 1 of 2 items matched",),
    ),
    Check(
        "search: index with an empty meta.json is refused, naming the file and the fix",
        "search-broken",
        2,
        error=(
            "Index 'broken-empty' cannot be read",
            "broken-empty/meta.json is empty",
            "--overwrite",
            "python -m core overlap delete --name broken-empty",
        ),
    ),
    Check(
        "list: the readable index is listed beside the broken ones",
        "list",
        0,
        stdout=("good\ttext\t2 docs", "broken-empty\t", "broken-json\t"),
    ),
    Check(
        "list: a broken index is marked unreadable with its cause",
        "list",
        0,
        line_with=("broken-json\t", ("UNREADABLE", "broken-json/meta.json is not valid JSON")),
    ),
]


def _check_id(check: Any) -> str:
    return (check.values[0] if hasattr(check, "values") else check).name


@pytest.fixture(scope="module")
def overlap_outcomes(tmp_path_factory) -> dict[str, subprocess.CompletedProcess]:
    tmp = tmp_path_factory.mktemp("overlap-faults")
    _jsonl(tmp / "train.jsonl", TRAIN_ROWS)
    _jsonl(tmp / "test.jsonl", TEST_ROWS)
    _jsonl(tmp / "good.jsonl", TRAIN_ROWS[1:])
    backend = EmbeddedBackend(tmp / "indexes")
    build_index(backend, "good", [TrainingSource(str(tmp / "good.jsonl"), name="train")])
    (tmp / "indexes" / "broken-empty").mkdir()
    (tmp / "indexes" / "broken-empty" / "meta.json").write_text("", encoding="utf-8")
    (tmp / "indexes" / "broken-json").mkdir()
    (tmp / "indexes" / "broken-json" / "meta.json").write_text('{"name": "broken-json", ', encoding="utf-8")
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {
            name: pool.submit(_cli, [a.replace("{tmp}", str(tmp)) for a in argv], tmp / "cache")
            for name, argv in OVERLAP_RUNS.items()
        }
    return {name: future.result() for name, future in futures.items()}


@pytest.mark.slow
@pytest.mark.parametrize("check", OVERLAP_CHECKS, ids=[_check_id(c) for c in OVERLAP_CHECKS])
def test_overlap_environment_fault(check: Check, overlap_outcomes):
    done = overlap_outcomes[check.run]
    assert done.returncode == check.rc, done.stderr
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == (1 if check.rc == 2 else 0), done.stderr
    for expected in check.error:
        assert expected in errors[0]
    if check.warning:
        warnings = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
        assert any(all(w in line for w in check.warning) for line in warnings), done.stderr
    lines = done.stdout.splitlines()
    for expected in check.stdout:
        assert any(expected in line for line in lines), done.stdout
    if check.line_with:
        picked = [line for line in lines if check.line_with[0] in line]
        assert len(picked) == 1, done.stdout
        for expected in check.line_with[1]:
            assert expected in picked[0]


# --- the same faults, in-process ---------------------------------------------------------------------------

META_FAULTS = [
    ("empty", "", "meta.json is empty"),
    ("blank", "  \n", "meta.json is empty"),
    ("not JSON", '{"name": ', "meta.json is not valid JSON (Expecting value at line 1, column 10)"),
    ("not an object", "[1, 2]", "meta.json does not hold a JSON object"),
    ("entry missing", '{"name": "x", "index_type": "text"}', "meta.json has no 'n_docs' entry"),
]


@pytest.mark.parametrize(("content", "cause"), [c[1:] for c in META_FAULTS], ids=[c[0] for c in META_FAULTS])
def test_unreadable_meta_is_listed_and_never_searched(tmp_path, content, cause):
    backend = EmbeddedBackend(tmp_path / "indexes")
    _jsonl(tmp_path / "train.jsonl", TRAIN_ROWS[1:])
    build_index(backend, "good", [TrainingSource(str(tmp_path / "train.jsonl"))])
    (tmp_path / "indexes" / "broken").mkdir()
    (tmp_path / "indexes" / "broken" / "meta.json").write_text(content, encoding="utf-8")
    infos = {info.name: info for info in backend.list()}
    assert set(infos) == {"good", "broken"}
    assert infos["good"].complete
    assert infos["good"].unreadable is None
    assert infos["good"].n_docs == 2
    broken = infos["broken"]
    assert not broken.complete
    assert broken.n_docs == 0
    assert str(tmp_path / "indexes" / "broken") in broken.unreadable
    assert cause in broken.unreadable
    with pytest.raises(DataError, match="cannot be read") as caught:
        backend.searchable_info("broken")
    assert cause in str(caught.value)
    assert "--overwrite" in str(caught.value)
    assert f"--index-dir {tmp_path / 'indexes'}" in str(caught.value)
    with pytest.raises(DataError, match="cannot be read"):
        backend.ngram_candidates("broken", [[("a",) * 8]], [], 100)
    backend.delete("broken")  # deleting is one of the two ways out
    assert [info.name for info in backend.list()] == ["good"]


@dataclass(frozen=True)
class ReaderCase:
    name: str
    rows: list[dict[str, Any]]
    source: dict[str, Any]
    texts: list[str] = field(default_factory=list)
    skipped: list[tuple[int, str]] = field(default_factory=list)
    error: str | None = None


READER_CASES = [
    ReaderCase(
        "first row without the text field",
        [{"title": "x"}, {"text": "a"}, {"text": "b"}],
        {},
        ["a", "b"],
        [(1, "no text in field 'text'")],
    ),
    ReaderCase(
        "only the last row has the field",
        [{"title": "x"}, {"body": "y"}, {"text": "c"}],
        {},
        ["c"],
        [(1, "no text in field 'text'"), (2, "no text in field 'text'")],
    ),
    ReaderCase(
        "no row has the field: a misspelt name",
        [{"title": "x"}, {"body": "y"}],
        {},
        error="has no field 'text' in any row. Fields found: 'title', 'body'.",
    ),
    ReaderCase(
        "first row without the messages field",
        [{"title": "x"}, {"messages": [{"role": "user", "content": "hi"}]}],
        {"messages_field": "messages"},
        ["hi"],
        [(1, "field 'messages' is missing")],
    ),
    ReaderCase(
        "messages field holding plain text",
        [{"title": "x"}, {"messages": "hi"}],
        {"messages_field": "messages"},
        error="field 'messages' is not a list of turns",
    ),
]


@pytest.mark.parametrize("case", READER_CASES, ids=[c.name for c in READER_CASES])
def test_training_rows_without_the_field_are_skipped_by_line(tmp_path, case: ReaderCase):
    reader = TrainingReader(TrainingSource(str(_jsonl(tmp_path / "train.jsonl", case.rows)), **case.source))
    if case.error:
        with pytest.raises(DataError, match="train.jsonl") as caught:
            list(reader.documents())
        assert case.error in str(caught.value)
        return
    assert [d.text for d in reader.documents()] == case.texts
    assert [(s.line, s.reason) for s in reader.skipped] == case.skipped


ID_CASES = [
    ("missing", {"text": "second"}, "no value in id field 'id'"),
    ("null", {"id": None, "text": "second"}, "no value in id field 'id'"),
    ("blank", {"id": "  ", "text": "second"}, "no value in id field 'id'"),
    ("NaN (an empty cell read by pandas)", {"id": float("nan"), "text": "second"}, "no value in id field 'id'"),
]


@pytest.mark.parametrize(("row", "reason"), [c[1:] for c in ID_CASES], ids=[c[0] for c in ID_CASES])
def test_test_row_without_its_id_is_skipped_by_line(row, reason):
    rows = [{"id": "a", "text": "first"}, row, {"id": 0, "text": "third"}]
    table = Table(rows, ["id", "text"], "t.jsonl", row_lines=[1, 2, 4])
    test_set = eval_set_from_table(table, "text", name="t", id_field="id")
    assert [(i.id, i.text) for i in test_set.instances] == [("a", "first"), ("0", "third")]
    assert [(s.line, s.reason) for s in test_set.skipped] == [(2, reason)]


def test_no_row_with_an_id_is_an_error_that_says_so():
    table = Table([{"text": "first"}, {"id": "", "text": "second"}], ["id", "text"], "t.jsonl")
    with pytest.raises(DataError, match="no row has text in field 'text' with a value in id field 'id'"):
        eval_set_from_table(table, "text", name="t", id_field="id")


def test_skipped_note_lists_each_reason_with_its_lines():
    same = [SkippedRow(4, "no text in field 'text'"), SkippedRow(9, "no text in field 'text'", "q9")]
    assert skipped_note("test", same) == "test: skipped 2 rows (lines 4, 9 (id q9)): no text in field 'text'."
    assert skipped_note("test", same[:1]) == "test: skipped 1 row (lines 4): no text in field 'text'."
    mixed = [*same, SkippedRow(7, "no value in id field 'id'")]
    assert skipped_note("test", mixed) == (
        "test: skipped 3 rows (lines 4, 9 (id q9), 7): no text in field 'text' (lines 4, 9); "
        "no value in id field 'id' (lines 7)."
    )


# --- (b) a stored run read back for a command on another file name, (c) model identities ---------------------


@dataclass(frozen=True)
class Rerun:
    command: str
    argv: list[str]
    """``{name}`` is ``alpha`` for the first run and ``beta`` for the rerun, ``{tmp}`` the files' folder."""
    rerun_flags: list[str]
    """Options of the rerun only that change no stored score (they must show in its provenance)."""
    names_file: Callable[[dict[str, Any]], str]
    """Where the ``--out`` document names the data set."""
    option: str
    """The provenance option holding the data set's path."""


RERUNS = [
    Rerun(
        "mia",
        ["mia", "--dataset", "{tmp}/{name}.jsonl", "--limit", "10"],
        ["--batch-size", "8"],
        lambda doc: doc["dataset"],
        "dataset",
    ),
    Rerun(
        "mcq",
        ["mcq", "--dataset", "{tmp}/{name}_mcq.jsonl", "--limit", "3"],
        [],
        lambda doc: doc["benchmark"],
        "dataset",
    ),
    Rerun(
        "delta",
        [
            "delta",
            "--test",
            "{tmp}/{name}_test.jsonl",
            "--reference",
            "{tmp}/{name}_ref.jsonl",
            "--limit",
            "4",
            "--resamples",
            "200",
        ],
        ["--seed", "1"],
        lambda doc: doc["test_set"],
        "test",
    ),
    Rerun(
        "dataset-inference",
        [
            "dataset-inference",
            "--suspect",
            "{tmp}/{name}.jsonl",
            "--suspect-where",
            "label=1",
            "--validation",
            "{tmp}/{name}.jsonl",
            "--validation-where",
            "label=0",
            "--limit",
            "6",
            "--splits",
            "3",
        ],
        [],
        lambda doc: doc["suspect"],
        "suspect",
    ),
]
BY_COMMAND = {r.command: r for r in RERUNS}


def _rerun_params() -> list[Any]:
    return [pytest.param(r.command, id=r.command) for r in RERUNS]


def _run_pair(rerun: Rerun, tmp: Path) -> dict[str, Any]:
    """The command on the alpha files, then on the beta copies (same rows) with the rerun's own flags."""
    outcome: dict[str, Any] = {}
    for name, extra in (("alpha", []), ("beta", rerun.rerun_flags)):
        out = tmp / f"{rerun.command}-{name}.json"
        argv = [a.replace("{tmp}", str(tmp)).replace("{name}", name) for a in rerun.argv]
        done = _cli(
            [*argv, *extra, "--model", "tiny-random", "--store", str(tmp / "results.sqlite"), "--out", str(out)],
            tmp / "cache",
        )
        assert done.returncode == 0, done.stderr
        outcome[name] = (done, json.loads(out.read_text(encoding="utf-8")))
    return outcome


@pytest.fixture(scope="module")
def reruns(tmp_path_factory) -> dict[str, dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("stored-readback")
    demo = REPO / "assets" / "demo"
    problems = (REPO / "assets" / "reference_problems.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    for name in ("alpha", "beta"):
        (tmp / f"{name}.jsonl").write_bytes((demo / "famous_vs_fresh.jsonl").read_bytes())
        (tmp / f"{name}_mcq.jsonl").write_bytes((demo / "mcq_sample.jsonl").read_bytes())
        (tmp / f"{name}_test.jsonl").write_text("".join(problems[:6]), encoding="utf-8")
        (tmp / f"{name}_ref.jsonl").write_text("".join(problems[6:12]), encoding="utf-8")
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {r.command: pool.submit(_run_pair, r, tmp) for r in RERUNS}
        inspect = pool.submit(
            _cli,
            [
                "inspect",
                "--text",
                "The quick brown fox jumps over the lazy dog.",
                "--model",
                "tiny-random",
                "--out",
                str(tmp / "inspect.json"),
            ],
            tmp / "cache",
        )
    outcomes = {command: future.result() for command, future in futures.items()}
    assert inspect.result().returncode == 0, inspect.result().stderr
    outcomes["inspect"] = {"beta": (inspect.result(), json.loads((tmp / "inspect.json").read_text()))}
    outcomes["store"] = tmp / "results.sqlite"
    return outcomes


@pytest.mark.slow
@pytest.mark.parametrize("command", _rerun_params())
def test_rerun_out_names_this_commands_data(command, reruns):
    rerun = BY_COMMAND[command]
    (_, first_doc), (done, doc) = reruns[command]["alpha"], reruns[command]["beta"]
    assert "alpha" in rerun.names_file(first_doc)
    assert "beta" in rerun.names_file(doc)
    body = {k: v for k, v in doc.items() if k != "provenance"}
    assert not [s for s in _walk_strings(body) if "alpha" in s]
    assert "alpha" not in done.stdout
    if command in ("mia", "mcq"):  # the rows were read back from the run the first command stored
        assert doc["run_id"] == first_doc["run_id"]


@pytest.mark.parametrize("command", _rerun_params())
def test_rerun_stdout_names_this_commands_data(command, reruns):
    done, _ = reruns[command]["beta"]
    assert "beta" in done.stdout
    assert "alpha" not in done.stdout


@pytest.mark.parametrize("command", _rerun_params())
def test_rerun_provenance_describes_this_command(command, reruns):
    rerun = BY_COMMAND[command]
    _, doc = reruns[command]["beta"]
    options = doc["provenance"]["options"]
    assert Path(options[rerun.option]).name.startswith("beta")
    assert not [s for s in _walk_strings(doc["provenance"]) if "alpha" in s]
    flags = rerun.rerun_flags
    for flag, value in zip(flags[::2], flags[1::2], strict=True):
        assert str(options[flag.removeprefix("--").replace("-", "_")]) == value


def test_stored_run_keeps_the_provenance_of_the_call_that_computed_it(reruns):
    _, first_doc = reruns["mia"]["alpha"]
    run = ResultStore(reruns["store"]).get_run(first_doc["run_id"])
    assert Path(run.meta["provenance"]["options"]["dataset"]).name == "alpha.jsonl"
    assert run.dataset == "alpha.jsonl"


@pytest.mark.parametrize("command", ["inspect", *BY_COMMAND])
def test_out_provenance_names_every_model_role(command, reruns):
    for _, doc in reruns[command].values():
        models = doc["provenance"]["models"]
        assert models, f"{command}: no model identity in its --out provenance"
        for role, identity in models.items():
            assert identity.get("kind"), (role, identity)
            assert identity.get("name") == "tiny-random", (role, identity)
            assert identity.get("weights"), (role, identity)
            assert identity.get("start_token"), (role, identity)
