"""No product file is named like a test: pytest collects ``test_*.py`` and ``*_test.py`` wherever it finds them,
so a page or bench script with such a name would be imported (and run) as a test module."""

from __future__ import annotations

import os
from fnmatch import fnmatch
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TEST_FILE_PATTERNS = ("test_*.py", "*_test.py")


def _skipped(folder: str) -> bool:
    """Folders that hold no product files: virtual environments, git's own, caches, test output."""
    return folder.startswith((".venv", ".git")) or folder.endswith("_cache") or folder in {"__pycache__", "test-output"}


def named_like_tests(root: Path) -> list[str]:
    """Files outside ``tests/`` whose names pytest would collect as test modules."""
    found = []
    for folder, subfolders, files in os.walk(root):
        at_top = Path(folder) == root
        subfolders[:] = [d for d in subfolders if not _skipped(d) and not (at_top and d == "tests")]
        found += [
            (Path(folder) / name).relative_to(root).as_posix()
            for name in files
            if any(fnmatch(name, pattern) for pattern in TEST_FILE_PATTERNS)
        ]
    return sorted(found)


def test_no_product_file_is_named_like_a_test():
    assert named_like_tests(REPO) == []


def test_the_name_check_finds_planted_test_names(tmp_path):
    for path in (
        "pages/8_Order_test.py",
        "bench/test_speed.py",
        "bench/speed.py",
        "tests/test_ok.py",
        "tests/ui/ok_test.py",
        ".venv/lib/test_x.py",
        "core/__pycache__/test_y.py",
    ):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("")
    assert named_like_tests(tmp_path) == ["bench/test_speed.py", "pages/8_Order_test.py"]
