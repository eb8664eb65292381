"""Provenance: what produced a result, stored with every run and written in every ``--out`` JSON.

A number someone shows a stakeholder must say where it came from: the LeakLens version and commit,
the library versions, the device and precision, exactly which model weights, and the options chosen.
"""

from __future__ import annotations

import platform
import subprocess
from collections.abc import Mapping
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from core import __version__
from core.config import PROJECT_ROOT


@lru_cache(maxsize=1)
def git_commit() -> str | None:
    """The checkout's commit (with ``-dirty`` when it has local changes); None outside a git checkout."""
    if not (PROJECT_ROOT / ".git").exists():
        return None
    try:
        commit = subprocess.run(
            ["git", "-C", str(PROJECT_ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(PROJECT_ROOT), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{commit}-dirty" if dirty else commit or None


def library_versions() -> dict[str, str | None]:
    """Versions of the libraries whose behaviour can move a score."""
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in ("torch", "transformers", "numpy", "scikit-learn"):
        try:
            from importlib.metadata import version

            versions[name] = version(name)
        except Exception:  # noqa: BLE001 - a missing library is recorded as unknown, never fatal
            versions[name] = None
    return versions


def build_provenance(
    *,
    command: str,
    options: Mapping[str, Any],
    models: Mapping[str, Mapping[str, Any]] | None = None,
    setup: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The provenance block: versions, commit, setup (device, dtype, revision), model identities, options.

    ``models`` maps each role ("model", "reference", "base: X", ...) to that model's identity.
    """
    return {
        "leaklens": __version__,
        "git_commit": git_commit(),
        "versions": library_versions(),
        "command": command,
        "setup": dict(setup or {}),
        "models": {role: dict(identity) for role, identity in (models or {}).items()},
        "options": {k: _plain(v) for k, v in options.items()},
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_plain(v) for v in value]
    return str(value)
