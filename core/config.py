"""Where LeakLens keeps its files."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV_VAR = "LEAKLENS_CACHE"


def cache_dir() -> Path:
    """Root of everything LeakLens writes: converted models, results, indexes.

    ``$LEAKLENS_CACHE`` when set, else ``~/.cache/leaklens``. Created on first use.
    """
    root = cache_root()
    _make_folder(root, f"the LeakLens cache folder (${CACHE_ENV_VAR} or ~/.cache/leaklens)")
    return root


def cache_root() -> Path:
    """Where ``cache_dir`` is, without creating it (to name it, e.g. as a folder no output may land in)."""
    return Path(os.environ.get(CACHE_ENV_VAR) or Path.home() / ".cache" / "leaklens").expanduser()


def cache_subdir(name: str) -> Path:
    path = cache_dir() / name
    _make_folder(path, "a LeakLens cache folder")
    return path


def _make_folder(path: Path, what: str) -> None:
    """Create ``path``; a file in the way or an unwritable disk is one plain error, not a traceback."""
    from core.errors import LeakLensError
    from core.files.outputs import os_error_cause

    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError as exc:
        raise LeakLensError(f"Cannot use {path} as {what}: it is a file, not a folder.") from exc
    except OSError as exc:
        raise LeakLensError(f"Cannot create {path} ({what}): {os_error_cause(exc)}.") from exc


PROJECT_ROOT = Path(__file__).resolve().parents[1]
"""The checkout: ``core/`` sits directly below it."""
ASSETS_DIR = PROJECT_ROOT / "assets"
"""Files shipped with the project: the reference problem set, demo data, logos."""
SHARED_DATA_DIR = PROJECT_ROOT.parent / "shared" / "data"
"""Sample datasets kept beside the checkout when it has them (WikiMIA, BookTection, MMLU samples): offered as
ready examples where present, never required."""
