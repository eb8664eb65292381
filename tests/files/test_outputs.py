"""Nothing LeakLens writes may destroy what a user made: every output is written atomically through one helper
(``core.files.outputs``), and a target that is an input of the command is refused before any work starts.

Each table row is a real command (``python -m core ...``, in-process for speed) over files made for the case;
every input's bytes are hashed before and after, and the command must exit 2 with one ``error:`` line naming
both paths. The full-disk and read-only cases run for real in a private mount namespace (``unshare --user
--map-root-user --mount`` with a small tmpfs), which needs no privileges where user namespaces are enabled.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from huggingface_hub import constants as hub_constants

from core.cli import main
from core.config import PROJECT_ROOT
from core.errors import OutputError
from core.files.outputs import OutputPlan, atomic_output, write_atomic

REPO = PROJECT_ROOT
DEMO = REPO / "assets" / "demo"


def _digests(folder: Path) -> dict[str, str]:
    """sha256 of every file under ``folder`` (symlinks by their target's bytes)."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def _one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    assert len(errors) == 1, f"expected one error line, got:\n{stderr}"
    assert "Traceback" not in stderr
    return errors[0]


# -- family 1: the data-loss reproductions, and every output flag against every input ------------------------


@dataclass(frozen=True)
class Refusal:
    name: str
    argv: list[str]
    """``{d}`` is the case folder."""
    names: tuple[str, ...]
    """Substrings of the one error line: both paths, in the user's words."""
    setup: Callable[[Path], None] | None = None


def _store_with_a_run(folder: Path) -> None:
    assert (
        main(
            [
                "mia",
                "--dataset",
                str(folder / "members.jsonl"),
                "--model",
                "tiny-random",
                "--limit",
                "10",
                "--store",
                str(folder / "S.sqlite"),
            ]
        )
        == 0
    )


REFUSALS = [
    Refusal(
        "mcq --export-shuffled onto its --dataset",
        ["mcq", "--dataset", "{d}/bench.jsonl", "--model", "tiny-random", "--export-shuffled", "{d}/bench.jsonl"],
        ("--export-shuffled file {d}/bench.jsonl is the dataset {d}/bench.jsonl",),
    ),
    Refusal(
        "mia --out onto its --dataset",
        ["mia", "--dataset", "{d}/members.jsonl", "--model", "tiny-random", "--no-store", "--out", "{d}/members.jsonl"],
        ("--out file {d}/members.jsonl is the dataset {d}/members.jsonl",),
    ),
    Refusal(
        "mia --out onto its --dataset through .. and a symlink",
        [
            "mia",
            "--dataset",
            "{d}/members.jsonl",
            "--model",
            "tiny-random",
            "--no-store",
            "--out",
            "{d}/sub/../link.jsonl",
        ],
        ("is the dataset {d}/members.jsonl",),
        setup=lambda d: ((d / "sub").mkdir(), (d / "link.jsonl").symlink_to(d / "members.jsonl")),
    ),
    Refusal(
        "mia --out onto a hard link of its --dataset",
        ["mia", "--dataset", "{d}/members.jsonl", "--model", "tiny-random", "--no-store", "--out", "{d}/hard.json"],
        ("is the dataset {d}/members.jsonl",),
        setup=lambda d: os.link(d / "members.jsonl", d / "hard.json"),
    ),
    Refusal(
        "mia --out onto its --store",
        [
            "mia",
            "--dataset",
            "{d}/members.jsonl",
            "--model",
            "tiny-random",
            "--store",
            "{d}/S.sqlite",
            "--out",
            "{d}/S.sqlite",
        ],
        ("--out file {d}/S.sqlite is the results store {d}/S.sqlite",),
        setup=_store_with_a_run,
    ),
    Refusal(
        "report --out onto its --store",
        ["report", "0", "--store", "{d}/S.sqlite", "--out", "{d}/S.sqlite"],
        ("--out file {d}/S.sqlite is the results store",),
        setup=_store_with_a_run,
    ),
    Refusal(
        "--out onto the store's write-ahead log",
        [
            "mia",
            "--dataset",
            "{d}/members.jsonl",
            "--model",
            "tiny-random",
            "--store",
            "{d}/S.sqlite",
            "--out",
            "{d}/S.sqlite-wal",
        ],
        ("is the results store {d}/S.sqlite-wal",),
    ),
    Refusal(
        "delta --out onto its --reference file",
        [
            "delta",
            "--test",
            "humaneval",
            "--reference",
            "{d}/problems.jsonl",
            "--model",
            "tiny-random",
            "--no-store",
            "--out",
            "{d}/problems.jsonl",
        ],
        ("is the reference set {d}/problems.jsonl",),
    ),
    Refusal(
        "dataset-inference --out onto --validation",
        [
            "dataset-inference",
            "--suspect",
            "{d}/members.jsonl",
            "--validation",
            "{d}/fresh.jsonl",
            "--model",
            "tiny-random",
            "--no-store",
            "--out",
            "{d}/fresh.jsonl",
        ],
        ("is the validation set {d}/fresh.jsonl",),
    ),
    Refusal(
        "inspect --out onto its --file",
        ["inspect", "--file", "{d}/passage.txt", "--model", "tiny-random", "--out", "{d}/passage.txt"],
        ("is the passage file {d}/passage.txt",),
    ),
    Refusal(
        "--out inside a local model folder",
        ["inspect", "--text", "hello there", "--model", "{d}/model", "--out", "{d}/model/config.json"],
        ("inside the model folder {d}/model",),
        setup=lambda d: _model_folder(d / "model"),
    ),
    Refusal(
        "overlap index --out onto its training set",
        [
            "overlap",
            "index",
            "--index-dir",
            "{d}/idx",
            "--name",
            "c",
            "--dataset",
            "{d}/train.jsonl",
            "--out",
            "{d}/train.jsonl",
        ],
        ("is the dataset {d}/train.jsonl",),
    ),
    Refusal(
        "overlap index --out onto a dataset named in its mixer YAML",
        [
            "overlap",
            "index",
            "--index-dir",
            "{d}/idx",
            "--name",
            "c",
            "--dataset-mixer-config",
            "{d}/mix.yaml",
            "--out",
            "{d}/train.jsonl",
        ],
        ("is the training source {d}/train.jsonl",),
        setup=lambda d: (d / "mix.yaml").write_text("dataset_mixer:\n  train.jsonl: 1.0\n"),
    ),
    Refusal(
        "overlap --out inside the index folder",
        ["overlap", "list", "--index-dir", "{d}/idx", "--out", "{d}/idx/listing.json"],
        ("inside the index folder {d}/idx",),
    ),
    Refusal(
        "overlap search --out onto its test set",
        [
            "overlap",
            "search",
            "--index-dir",
            "{d}/idx",
            "--index",
            "c",
            "--dataset",
            "{d}/test.jsonl",
            "--output-dir",
            "{d}/out",
            "--out",
            "{d}/test.jsonl",
        ],
        ("is the dataset {d}/test.jsonl",),
    ),
    Refusal(
        "mcq --out and --export-shuffled onto one file",
        [
            "mcq",
            "--dataset",
            "{d}/bench.jsonl",
            "--model",
            "tiny-random",
            "--no-store",
            "--out",
            "{d}/x.json",
            "--export-shuffled",
            "{d}/x.json",
        ],
        ("--export-shuffled file {d}/x.json is also the --out file",),
    ),
    Refusal(
        "--out is an existing folder",
        ["mia", "--dataset", "{d}/members.jsonl", "--no-store", "--out", "{d}"],
        ("--out file {d} is an existing folder",),
    ),
    Refusal(
        "--out below a file",
        ["mia", "--dataset", "{d}/members.jsonl", "--no-store", "--out", "{d}/fresh.jsonl/r.json"],
        ("{d}/fresh.jsonl is a file, not a folder",),
    ),
    Refusal(
        "--out in a symlink loop",
        ["mia", "--dataset", "{d}/members.jsonl", "--no-store", "--out", "{d}/loop"],
        ("{d}/loop", "symlink loop"),
        setup=lambda d: ((d / "loop").symlink_to(d / "loop2"), (d / "loop2").symlink_to(d / "loop")),
    ),
    Refusal(
        "--output-dir is a file",
        [
            "overlap",
            "search",
            "--index-dir",
            "{d}/idx",
            "--index",
            "c",
            "--dataset",
            "{d}/test.jsonl",
            "--output-dir",
            "{d}/fresh.jsonl",
        ],
        ("--output-dir folder {d}/fresh.jsonl is a file, not a folder",),
    ),
    Refusal(
        "report --out named .pdf",
        ["report", "0", "--store", "{d}/S.sqlite", "--out", "{d}/r.pdf"],
        ("--out must end in .html (got {d}/r.pdf)",),
    ),
]


def _model_folder(folder: Path) -> None:
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "llama"}))


def _case_inputs(folder: Path) -> None:
    famous = [json.loads(line) for line in (DEMO / "famous_vs_fresh.jsonl").read_text().splitlines()]
    (folder / "members.jsonl").write_text("".join(json.dumps(r) + "\n" for r in famous))
    (folder / "fresh.jsonl").write_text("".join(json.dumps(r) + "\n" for r in famous if r["label"] == 0))
    shutil.copy(DEMO / "mcq_sample.jsonl", folder / "bench.jsonl")
    shutil.copy(DEMO / "overlap_train.jsonl", folder / "train.jsonl")
    shutil.copy(DEMO / "overlap_test.jsonl", folder / "test.jsonl")
    (folder / "passage.txt").write_text("Four score and seven years ago our fathers brought forth a new nation.")
    problem = {"task_id": "p/0", "prompt": "def add(a, b):\n", "canonical_solution": "    return a + b\n"}
    (folder / "problems.jsonl").write_text(json.dumps(problem) + "\n")
    assert (
        main(
            [
                "overlap",
                "index",
                "--index-dir",
                str(folder / "idx"),
                "--name",
                "c",
                "--dataset",
                str(folder / "train.jsonl"),
            ]
        )
        == 0
    )


@pytest.mark.slow
@pytest.mark.parametrize("case", REFUSALS, ids=[c.name for c in REFUSALS])
def test_an_output_onto_an_input_is_refused_before_any_work(case: Refusal, tmp_path, capsys):
    _case_inputs(tmp_path)
    if case.setup:
        case.setup(tmp_path)
    capsys.readouterr()
    before = _digests(tmp_path)
    code = main([a.replace("{d}", str(tmp_path)) for a in case.argv])
    out, err = capsys.readouterr()
    assert code == 2
    line = _one_error_line(err)
    for name in case.names:
        assert name.replace("{d}", str(tmp_path)) in line, line
    assert out == "", "the command did work before refusing its output"
    assert _digests(tmp_path) == before


# -- files read without a flag, and names that cannot be a file ------------------------------------------------


@dataclass(frozen=True)
class ImplicitRead:
    name: str
    target: Callable[[Path], str]
    """The --out value, from the test's folder."""
    extra: tuple[str, ...]
    expected: str
    """Text of the one error line (``{target}`` is the --out value)."""


def _cached_tokenizer(_: Path) -> str:
    from core.config import cache_root
    from core.engine.bundled import bundled_tokenizer

    bundled_tokenizer()  # the cached tokenizer exists, as after any first run
    return str(sorted((cache_root() / "models").glob("*/tokenizer.json"))[0])  # the tokenizer's or the model's


def _users_tokenizer(folder: Path) -> str:
    (folder / "tok").mkdir(exist_ok=True)
    (folder / "tok" / "tokenizer.json").write_text('{"version": "1.0"}')
    return str(folder / "tok" / "tokenizer.json")


IMPLICIT_READS = [
    ImplicitRead(
        "the shipped fresh passages",
        lambda d: str(PROJECT_ROOT / "assets" / "calibration" / "fresh_passages.jsonl"),
        (),
        "is inside the LeakLens assets folder",
    ),
    ImplicitRead(
        "the built-in reference set",
        lambda d: str(PROJECT_ROOT / "assets" / "reference_problems.jsonl"),
        (),
        "is inside the LeakLens assets folder",
    ),
    ImplicitRead("a cached tokenizer file", _cached_tokenizer, (), "is inside the LeakLens cache folder"),
    ImplicitRead(
        "the served model's own tokenizer",
        _users_tokenizer,
        ("--endpoint", "http://127.0.0.1:9/v1", "--tokenizer", "{d}/tok"),
        "is inside the tokenizer folder",
    ),
    ImplicitRead(
        "a file of the Hugging Face hub cache",
        lambda d: str(Path(hub_constants.HF_HUB_CACHE) / "models--none" / "config.json"),
        (),
        "is inside the Hugging Face",
    ),
    ImplicitRead("/dev/stdout", lambda d: "/dev/stdout", (), "is a device or a process's own stream"),
    ImplicitRead("an empty name", lambda d: "", (), "is an empty path"),
    ImplicitRead("-", lambda d: "-", (), "would be a file named '-'"),
    ImplicitRead("a trailing slash", lambda d: f"{d}/newdir/", (), "ends in '/', so it names a folder"),
]


@pytest.mark.parametrize("case", IMPLICIT_READS, ids=[c.name for c in IMPLICIT_READS])
def test_a_file_read_without_a_flag_or_a_name_that_is_no_file_is_refused(case: ImplicitRead, tmp_path, capsys):
    target = case.target(tmp_path)
    existing = Path(target) if target not in ("", "-") and Path(target).is_file() else None
    before = hashlib.sha256(existing.read_bytes()).hexdigest() if existing else None
    folder_before = _digests(tmp_path)
    extra = [a.replace("{d}", str(tmp_path)) for a in case.extra]
    code = main(["inspect", "--text", "Four score and seven years ago.", *extra, "--out", target])
    out, err = capsys.readouterr()
    assert code == 2
    assert case.expected in _one_error_line(err)
    assert out == "", "the command did work before refusing its output"
    if existing is not None:
        assert hashlib.sha256(existing.read_bytes()).hexdigest() == before
    assert _digests(tmp_path) == folder_before
    assert not (tmp_path / "newdir").exists()


def test_the_fresh_passages_named_by_their_environment_variable_are_an_input(tmp_path, capsys, monkeypatch):
    from core.passage.calibration import FRESH_PASSAGES_ENV, FRESH_PASSAGES_PATH

    own = tmp_path / "fresh.jsonl"
    own.write_bytes(FRESH_PASSAGES_PATH.read_bytes()[:4000].rsplit(b"\n", 1)[0] + b"\n")
    before = own.read_bytes()
    monkeypatch.setenv(FRESH_PASSAGES_ENV, str(own))
    assert main(["inspect", "--text", "Four score and seven years ago.", "--out", str(own)]) == 2
    assert "LEAKLENS_FRESH_PASSAGES" in _one_error_line(capsys.readouterr().err)
    assert own.read_bytes() == before


def test_the_file_this_commands_output_is_redirected_to_is_refused(tmp_path):
    log = tmp_path / "log.txt"
    log.write_text("earlier lines of the user's log\n")
    with log.open("a") as handle:
        done = subprocess.run(
            [sys.executable, "-m", "core", "inspect", "--text", "Four score.", "--out", str(log)],
            cwd=REPO,
            stdout=handle,
            stderr=subprocess.PIPE,
            env={**os.environ, "HF_HUB_OFFLINE": "1"},
            timeout=120,
        )
    assert done.returncode == 2
    assert "is where this command's standard output goes" in _one_error_line(done.stderr.decode())
    assert log.read_text() == "earlier lines of the user's log\n"


# -- family 2: decontamination never writes over a training source, names never collide ------------------------
# (the second-decontamination reproduction runs on both backends in tests/overlap/test_overlap_outputs.py)


def test_decontaminating_onto_its_own_source_without_the_check_still_reads_it_whole(tmp_path):
    """The writer reads the source to the end before the copy replaces anything, so even a path equal to the
    source (the check bypassed) yields the cleaned rows, never an emptied file."""
    from core.overlap.decontaminate import _write_without
    from core.overlap.sources import TrainingReader, TrainingSource

    path = tmp_path / "train.jsonl"
    rows = [json.dumps({"text": f"row {k}"}) + "\n" for k in range(5)]
    path.write_text("".join(rows))
    n_rows, _ = _write_without(TrainingReader(TrainingSource(str(path))), {1, 3}, path, drop_malformed=False)
    assert n_rows == 5
    assert path.read_text() == rows[0] + rows[2] + rows[4]


def test_outputs_whose_names_collide_get_distinct_stable_names_and_the_summary_lists_them(tmp_path, capsys):
    """Index ``a`` holds sets ``b`` and ``c`` (columns ``a/b``, ``a/c``) and index ``a_b`` holds one set: made
    file-safe, ``a/b`` and ``a_b`` collide. Every file written is listed once, and exists."""
    (tmp_path / "b.jsonl").write_bytes((DEMO / "overlap_train.jsonl").read_bytes())
    (tmp_path / "c.jsonl").write_bytes((DEMO / "overlap_train.jsonl").read_bytes())
    idx = str(tmp_path / "idx")
    assert (
        main(
            [
                "overlap",
                "index",
                "--index-dir",
                idx,
                "--name",
                "a",
                "--dataset",
                str(tmp_path / "b.jsonl"),
                "--dataset",
                str(tmp_path / "c.jsonl"),
            ]
        )
        == 0
    )
    assert main(["overlap", "index", "--index-dir", idx, "--name", "a_b", "--dataset", "demo:overlap-train"]) == 0
    capsys.readouterr()
    out = tmp_path / "out"
    runs = []
    for _ in range(2):
        assert (
            main(
                [
                    "overlap",
                    "search",
                    "--index-dir",
                    idx,
                    "--index",
                    "a,a_b",
                    "--dataset",
                    "demo:overlap-test",
                    "--output-dir",
                    str(out),
                    "--decontaminate",
                    "--json",
                ]
            )
            == 0
        )
        runs.append(json.loads(capsys.readouterr().out))
    first = runs[0]
    written = first["files"] + [c["path"] for c in first["decontaminated"]]
    assert len(written) == len(set(written)) == len(list(out.iterdir()))
    assert sorted(Path(p).name for p in written) == sorted(p.name for p in out.iterdir())
    assert {Path(c["path"]).name for c in first["decontaminated"]} == {
        "a_b.decontaminated.jsonl",
        "a_c.decontaminated.jsonl",
        "a_b-2.decontaminated.jsonl",
    }
    assert runs[1]["files"] == first["files"]  # stable: the same search names its files the same way


# -- family 3: two inputs with the same file name stay two inputs --------------------------------------------


def test_two_test_sets_with_one_file_name_stay_two_rows_and_two_files(tmp_path, capsys):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
    (tmp_path / "a" / "test.jsonl").write_bytes((DEMO / "overlap_test.jsonl").read_bytes())
    lines = (DEMO / "overlap_test.jsonl").read_text().splitlines()
    (tmp_path / "b" / "test.jsonl").write_text("\n".join(lines[:3]) + "\n")
    idx = str(tmp_path / "idx")
    assert main(["overlap", "index", "--index-dir", idx, "--name", "c", "--dataset", "demo:overlap-train"]) == 0
    capsys.readouterr()
    assert (
        main(
            [
                "overlap",
                "search",
                "--index-dir",
                idx,
                "--index",
                "c",
                "--dataset",
                str(tmp_path / "a/test.jsonl"),
                "--dataset",
                str(tmp_path / "b/test.jsonl"),
                "--output-dir",
                str(tmp_path / "out"),
                "--json",
            ]
        )
        == 0
    )
    document = json.loads(capsys.readouterr().out)
    rows = {row["eval_dataset"]: row["instances"] for row in document["contamination"]}
    assert rows == {"a__test": len(lines), "b__test": 3}
    assert sorted(Path(p).name for p in document["files"]) == [
        "a__test__c.jsonl",
        "b__test__c.jsonl",
        "contamination_report.tsv",
    ]


def test_two_training_files_with_one_name_stay_two_sets_in_one_index(tmp_path, capsys):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "train.jsonl").write_bytes((DEMO / "overlap_train.jsonl").read_bytes())
    assert (
        main(
            [
                "overlap",
                "index",
                "--index-dir",
                str(tmp_path / "idx"),
                "--name",
                "c",
                "--json",
                "--dataset",
                str(tmp_path / "a/train.jsonl"),
                "--dataset",
                str(tmp_path / "b/train.jsonl"),
            ]
        )
        == 0
    )
    index = json.loads(capsys.readouterr().out)["index"]
    assert list(index["datasets"]) == ["a__train", "b__train"]
    assert index["datasets"]["a__train"] == index["datasets"]["b__train"] > 0


# -- family 6: environment faults are one line, and leave the previous file whole ----------------------------


NAMESPACE = ["unshare", "--user", "--map-root-user", "--mount"]


def _namespaces_work() -> bool:
    if shutil.which("unshare") is None:
        return False
    done = subprocess.run([*NAMESPACE, "true"], capture_output=True)
    return done.returncode == 0


@dataclass(frozen=True)
class Fault:
    name: str
    prepare: str
    """Shell run inside the namespace first; ``{m}`` is the small tmpfs."""
    argv: str
    """``python -m core`` arguments."""
    cause: str
    """What the one error line must say."""
    before_work: bool
    """True when the fault must stop the command before it scores anything."""


_MOUNT = "mount -t tmpfs -o size=256k tmpfs {m} && printf '%s' '{{\"previous\": 1}}' > {m}/r.json"
_FILL = " && (head -c 300000 /dev/zero > {m}/filler || true)"
_READ_ONLY = " && mount -o remount,ro {m}"
_MIA = "mia --dataset demo:famous-vs-fresh --model tiny-random --limit 10"
FAULTS = [
    Fault(
        "--out on a full disk",
        _MOUNT + _FILL,
        f"{_MIA} --no-store --out {{m}}/r.json",
        "Could not write {m}/r.json: no space left on the device",
        False,
    ),
    Fault(
        "--out on a read-only file system",
        _MOUNT + _READ_ONLY,
        f"{_MIA} --no-store --out {{m}}/r.json",
        "{m} is on a read-only file system",
        True,
    ),
    Fault(
        "the store on a full disk",
        _MOUNT + _FILL,
        f"{_MIA} --store {{m}}/s.sqlite",
        "results store {m}/s.sqlite could not be used: no space left on the device",
        False,
    ),
    Fault(
        "the store on a read-only file system",
        _MOUNT + _READ_ONLY,
        f"{_MIA} --store {{m}}/s.sqlite",
        "Cannot write the results store {m}/s.sqlite: {m} is on a read-only file system",
        True,
    ),
    Fault(
        "an embedded index on a full disk",
        _MOUNT + " && (head -c 200000 /dev/zero > {m}/filler || true)",  # room to start, not to finish
        "overlap index --name full --dataset assets/demo/famous_vs_fresh.jsonl --index-dir {m}/ix",
        "Cannot write the index 'full' in {m}/ix: no space left on the device",
        False,
    ),
    Fault(
        "a report from a store on a read-only file system",
        _MOUNT + f" && {sys.executable} -m core {_MIA} --store {{m}}/s.sqlite > /dev/null" + _READ_ONLY,
        "report 0 --store {m}/s.sqlite --out {m}/../r.html",
        "its folder is on a read-only file system",
        True,
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize("fault", FAULTS, ids=[f.name for f in FAULTS])
def test_environment_faults_are_one_line_and_keep_the_previous_file(fault: Fault, tmp_path):
    """A real small tmpfs in a private mount namespace: filled up, or remounted read-only. The old r.json there
    must come out byte-identical, and the command ends in one error line."""
    assert _namespaces_work(), "user and mount namespaces are needed for this test (unshare)"
    mount = tmp_path / "mnt"
    mount.mkdir()
    command = (
        f"{fault.prepare.format(m=mount)} && {sys.executable} -m core {fault.argv.format(m=mount)}; "
        f"echo rc=$?; cat {mount}/r.json"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    done = subprocess.run([*NAMESPACE, "bash", "-c", command], cwd=REPO, env=env, capture_output=True, timeout=300)
    stdout, stderr = done.stdout.decode(), done.stderr.decode()
    assert "rc=2" in stdout, stdout + stderr
    assert fault.cause.format(m=mount) in _one_error_line(stderr)
    assert stdout.endswith('{"previous": 1}'), "the previous r.json was changed"
    if fault.before_work:
        assert "scored" not in stdout, "the fault was found only after the work"
        assert "dataset:" not in stdout, "the fault was found only after the work"


@dataclass(frozen=True)
class Misplaced:
    name: str
    argv: list[str]
    line: str
    env: dict[str, str] | None = None


MISPLACED = [
    Misplaced(
        "--store is a folder",
        ["mia", "--dataset", "demo:famous-vs-fresh", "--store", "{d}/folder"],
        "The results store {d}/folder is a folder; give a file path such as {d}/folder/results.sqlite",
    ),
    Misplaced(
        "--store below a file",
        ["mia", "--dataset", "demo:famous-vs-fresh", "--store", "{d}/file/s.sqlite"],
        "Cannot write the results store {d}/file/s.sqlite: {d}/file is a file, not a folder",
    ),
    Misplaced(
        "--index-dir is a file",
        ["overlap", "list", "--index-dir", "{d}/file"],
        "The index folder {d}/file (--index-dir) is a file, not a folder",
    ),
    Misplaced(
        "the cache folder is a file",
        ["overlap", "list"],
        "Cannot use {d}/file as the LeakLens cache folder",
        env={"LEAKLENS_CACHE": "{d}/file"},
    ),
]


@pytest.mark.parametrize("case", MISPLACED, ids=[c.name for c in MISPLACED])
def test_a_file_where_a_folder_is_needed_and_the_reverse_is_one_line(case: Misplaced, tmp_path, capsys, monkeypatch):
    (tmp_path / "folder").mkdir()
    (tmp_path / "file").write_text("x")
    for name, value in (case.env or {}).items():
        monkeypatch.setenv(name, value.replace("{d}", str(tmp_path)))
    before = _digests(tmp_path)
    assert main([a.replace("{d}", str(tmp_path)) for a in case.argv]) == 2
    out, err = capsys.readouterr()
    assert case.line.replace("{d}", str(tmp_path)) in _one_error_line(err)
    assert out == ""
    assert _digests(tmp_path) == before


# -- the helper itself --------------------------------------------------------------------------------------


def test_a_failed_write_leaves_the_previous_file_and_no_temporary_file(tmp_path):
    target = tmp_path / "r.json"
    target.write_text("old")
    with pytest.raises(ZeroDivisionError), atomic_output(target) as handle:
        handle.write("new, half")
        1 / 0  # noqa: B018 - the failure in the middle of a write
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_a_rewritten_file_keeps_its_permissions_and_a_new_one_gets_the_usual_ones(tmp_path):
    kept = tmp_path / "kept.json"
    kept.write_text("old")
    kept.chmod(0o640)
    write_atomic(kept, "new")
    assert kept.read_text() == "new"
    assert kept.stat().st_mode & 0o777 == 0o640
    umask = os.umask(0o022)
    os.umask(umask)
    fresh = write_atomic(tmp_path / "sub" / "new.json", b"bytes")
    assert fresh.read_bytes() == b"bytes"
    assert fresh.stat().st_mode & 0o777 == 0o666 & ~umask


def test_a_symlinked_output_rewrites_the_file_it_points_at(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    (tmp_path / "link.json").symlink_to(real)
    write_atomic(tmp_path / "link.json", "new")
    assert (tmp_path / "link.json").is_symlink()
    assert real.read_text() == "new"


def test_an_input_named_after_the_output_was_claimed_is_still_checked(tmp_path):
    plan = OutputPlan()
    plan.claim(tmp_path / "x.json", "--out file")
    with pytest.raises(OutputError, match="is the dataset"):
        plan.add_input("dataset", tmp_path / "x.json")


# -- the helper is the only writer ----------------------------------------------------------------------------

WRITE_MODE = re.compile(r"[wax+]")
PATH_WRITERS = {"write_text", "write_bytes", "to_csv", "to_parquet", "write_html", "write_image", "savefig", "fdopen"}
"""Methods that write to the path they are called on or given."""
MODULE_WRITERS = {
    ("json", "dump"),
    ("pickle", "dump"),
    ("yaml", "dump"),
    ("np", "save"),
    ("numpy", "save"),
    ("np", "savez"),
    ("torch", "save"),
    ("shutil", "copy"),
    ("shutil", "copyfile"),
    ("shutil", "copy2"),
    ("os", "open"),
}
"""Module functions that write a file; fine only into an ``atomic_output`` block's ``handle``."""
HELPER = REPO / "core" / "files" / "outputs.py"


def _writes(path: Path) -> list[str]:
    """Every call in ``path`` that opens a file for writing or writes one by path, except into a ``handle``
    (the name every ``atomic_output`` block gives its file)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        owner = func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else None
        into_handle = any(isinstance(a, ast.Name) and a.id == "handle" for a in node.args)
        if name == "open" and owner != "os":
            mode = next((k.value for k in node.keywords if k.arg == "mode"), None)
            positional = node.args[1:2] if isinstance(func, ast.Name) else node.args[:1]
            mode = mode or (positional[0] if positional else None)
            if isinstance(mode, ast.Constant) and isinstance(mode.value, str) and WRITE_MODE.search(mode.value):
                found.append(f"{node.lineno} open(..., {mode.value!r})")
        elif (owner, name) in MODULE_WRITERS and not into_handle:
            found.append(f"{node.lineno} {owner}.{name}(...)")
        elif name in PATH_WRITERS or (name == "to_json" and node.args and not into_handle):
            found.append(f"{node.lineno} {name}(...)")
    return found


def test_no_module_writes_a_file_except_through_the_one_helper():
    modules = [
        p
        for p in [
            *(REPO / "core").rglob("*.py"),
            *(REPO / "pages").glob("*.py"),
            *(REPO / "ui").rglob("*.py"),
            REPO / "app.py",
        ]
        if p != HELPER
    ]
    found = [f"{module.relative_to(REPO)}:{hit}" for module in modules for hit in _writes(module)]
    assert found == [], "write through core.files.outputs (atomic_output / write_atomic):\n" + "\n".join(found)


def test_the_write_finder_finds_planted_writes(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text(
        "import json, os, shutil\nimport numpy as np\nfrom pathlib import Path\n"
        "open('x', 'w')\nPath('x').open('ab')\nPath('x').write_text('t')\nPath('x').write_bytes(b'')\n"
        "json.dump({}, open('x'))\nnp.save('x.npy', 1)\nshutil.copy('a', 'b')\nos.open('x', os.O_WRONLY)\n"
        "open('x', mode='x')\n"
        "open('x')\nPath('x').open('rb')\njson.dump({}, handle)\nnp.save(handle, 1)\nresult.to_json()\n"
    )
    hits = _writes(planted)
    assert [int(h.split()[0]) for h in hits] == list(range(4, 13)), hits
