"""Where LeakLens keeps its files."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV_VAR = "LEAKLENS_CACHE"


def cache_dir() -> Path:
    """Root of everything LeakLens writes: converted models, results, indexes.

    ``$LEAKLENS_CACHE`` when set, else ``~/.cache/leaklens``. Created on first use.
    """
    root = Path(os.environ.get(CACHE_ENV_VAR) or Path.home() / ".cache" / "leaklens").expanduser()
    root.mkdir(parents=True, exist_ok=True)
    return root


def cache_subdir(name: str) -> Path:
    path = cache_dir() / name
    path.mkdir(parents=True, exist_ok=True)
    return path


PROJECT_ROOT = Path(__file__).resolve().parents[1]
"""The checkout: ``core/`` sits directly below it."""
ASSETS_DIR = PROJECT_ROOT / "assets"
"""Files shipped with the project: the reference problem set, demo data, logos."""
