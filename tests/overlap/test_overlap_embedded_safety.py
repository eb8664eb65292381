"""The embedded backend never leaves an index half-built under its name: a build whose process dies keeps
the old index whole, and the next build of that name clears what the dead one left (issue 16, item 2)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from core.overlap.backends import get_backend
from core.overlap.indexing import build_index
from core.overlap.matching import SearchSettings, search
from core.overlap.sources import EvalInstance, EvalSet, TrainingSource
from tests.overlap.conftest import REPO

SENTENCE = "the quick brown fox jumps over the lazy dog near the quiet river bank today"


def test_a_build_killed_mid_way_keeps_the_old_index_and_is_cleared_by_the_next(tmp_path):
    old = tmp_path / "old.jsonl"
    old.write_text(json.dumps({"text": f"once {SENTENCE}"}) + "\n", encoding="utf-8")
    big = tmp_path / "big.jsonl"
    big.write_text("".join(json.dumps({"text": f"row {k} {SENTENCE}"}) + "\n" for k in range(2500)), encoding="utf-8")
    root = tmp_path / "indexes"
    backend = get_backend("embedded", root=root)
    build_index(backend, "train", [TrainingSource(str(old))])

    # Another process rebuilds it with --overwrite and dies (SIGKILL) after its first batch.
    script = textwrap.dedent(f"""
        import os, signal
        from core.overlap.backends import get_backend
        from core.overlap.indexing import build_index
        from core.overlap.sources import TrainingSource
        def die(done, total):
            os.kill(os.getpid(), signal.SIGKILL)
        build_index(get_backend("embedded", root={str(root)!r}), "train", [TrainingSource({str(big)!r})],
                    overwrite=True, progress=die)
    """)
    killed = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert killed.returncode == -9, killed.stderr
    assert list(root.glob(".train.building-*"))  # what the dead build left behind

    (info,) = backend.list()
    assert info.name == "train"
    assert info.complete
    assert info.n_docs == 1
    tests = EvalSet("t", [EvalInstance("0", SENTENCE)], "inline")
    assert search(backend, ["train"], [tests], SearchSettings())[0].value == 1.0

    build_index(backend, "train", [TrainingSource(str(big))], overwrite=True)
    assert backend.info("train").n_docs == 2500
    assert sorted(p.name for p in root.iterdir()) == ["train"]  # the abandoned build folder is gone


def test_indexing_the_same_unchanged_files_again_keeps_the_index_and_says_so(tmp_path, capsys):
    """The README's `overlap index --name demo` after the dashboard built the same index: kept, not an error;
    a changed file or other settings under the same name still ask for --overwrite."""
    from core.cli import main

    corpus = tmp_path / "train.jsonl"
    corpus.write_text("".join(json.dumps({"text": f"document number {i} " * 6}) + "\n" for i in range(30)))
    argv = ["overlap", "index", "--name", "demo", "--dataset", str(corpus), "--index-dir", str(tmp_path / "ix")]
    assert main(argv) == 0
    first = capsys.readouterr().out
    assert "30 documents" in first and "already built" not in first
    folder = tmp_path / "ix" / "demo"
    before = sorted((p.name, p.stat().st_mtime_ns) for p in folder.iterdir())
    assert main(argv) == 0
    again = capsys.readouterr().out
    assert "already built from these unchanged training sets, so it was kept as it is" in again
    assert sorted((p.name, p.stat().st_mtime_ns) for p in folder.iterdir()) == before
    assert main([*argv, "--ngram-size", "5"]) == 2
    assert "already exists" in capsys.readouterr().err
    with corpus.open("a") as handle:
        handle.write(json.dumps({"text": "one more document " * 6}) + "\n")
    assert main(argv) == 2
    assert "already exists" in capsys.readouterr().err
