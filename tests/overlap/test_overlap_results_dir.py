"""The Overlap page's result folders live under the cache and are pruned to a size budget (issue 16, item 16)."""

from __future__ import annotations

import os

from core.config import cache_dir
from core.overlap.run import results_dir


def _folder(root, name: str, size: int, age: int):
    path = root / name
    path.mkdir()
    (path / "copy.jsonl").write_bytes(b"x" * size)
    os.utime(path, (1_700_000_000 + age, 1_700_000_000 + age))
    return path


def test_result_folders_are_in_the_cache_and_pruned_oldest_first(tmp_path, monkeypatch):
    monkeypatch.setenv("LEAKLENS_CACHE", str(tmp_path / "cache"))
    first = results_dir()
    assert first.parent == cache_dir() / "overlap-results"
    assert first.is_dir()

    root = tmp_path / "results"
    root.mkdir()
    old = [_folder(root, f"old{k}", 400, k) for k in range(4)]  # old0 is the oldest
    new = results_dir(max_bytes=1000, keep=1, root=root)
    # Newest first: old3 (400) and old2 (800) fit in 1000 bytes; old1 and old0 do not.
    assert sorted(p.name for p in root.iterdir()) == sorted(["old2", "old3", new.name])
    assert not old[0].exists()
    assert not old[1].exists()


def test_the_newest_folders_stay_whatever_their_size(tmp_path):
    root = tmp_path / "results"
    root.mkdir()
    for k in range(3):
        _folder(root, f"big{k}", 5000, k)
    results_dir(max_bytes=1000, keep=2, root=root)
    assert sorted(p.name for p in root.iterdir() if p.name.startswith("big")) == ["big1", "big2"]
