"""The decontamination data-loss reproduction, on the embedded backend and on a real Elasticsearch.

Decontaminate into a folder, index the decontaminated file under the same name, decontaminate into the same
folder again: the file to write is now the index's training source. It is refused before the search (exit 2,
one line naming both), and every file keeps its bytes."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from core.cli import main

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "assets" / "demo"


def _digests(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize("backend", ["embedded", "elasticsearch"])
def test_a_second_decontamination_into_the_same_folder_keeps_the_training_file(backend, request, tmp_path, capsys):
    if backend == "elasticsearch":
        name = request.getfixturevalue("index_name")
        where = ["--backend", "elasticsearch", "--es-url", request.getfixturevalue("es_url")]
    else:
        name, where = "corpus", ["--index-dir", str(tmp_path / "idx")]
    shutil.copy(DEMO / "overlap_train.jsonl", tmp_path / "train.jsonl")
    shutil.copy(DEMO / "overlap_test.jsonl", tmp_path / "test.jsonl")
    out = tmp_path / "D"
    search = [
        "overlap",
        "search",
        *where,
        "--index",
        name,
        "--dataset",
        str(tmp_path / "test.jsonl"),
        "--output-dir",
        str(out),
        "--decontaminate",
    ]
    try:
        assert main(["overlap", "index", *where, "--name", name, "--dataset", str(tmp_path / "train.jsonl")]) == 0
        assert main(search) == 0
        cleaned = out / f"{name}.decontaminated.jsonl"
        assert cleaned.stat().st_size > 0
        assert main(["overlap", "index", *where, "--name", name, "--overwrite", "--dataset", str(cleaned)]) == 0
        capsys.readouterr()
        before = _digests(tmp_path)
        assert main(search) == 2
        err = capsys.readouterr().err
        errors = [line for line in err.splitlines() if line.startswith("error:")]
        assert len(errors) == 1, err
        assert "Traceback" not in err, err
        assert f"decontaminated copy of {name} {cleaned}" in errors[0]
        assert f"training source of index {name}" in errors[0]
        assert _digests(tmp_path) == before
    finally:
        if backend == "elasticsearch":
            main(["overlap", "delete", *where, "--name", name])
