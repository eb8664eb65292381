"""What a model spec *is*, not only what it is called: stored scores must never belong to other weights.

- a bundled model: its name and the version of the package that carries its weights;
- a local checkpoint folder: its path and a sha256 over the contents of its files (each file's hash is
  cached by size and modification time, so an unchanged folder is not re-read on every run);
- a hub id: the id, the revision asked for and, when the hub cache already holds it, the commit that
  revision resolved to (known offline from the cache's ``refs`` files).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
from pathlib import Path
from typing import Any

from core.config import cache_dir
from core.engine.model_kind import LocalKind, model_kind
from core.errors import OutputError
from core.files.outputs import write_atomic

HASH_CACHE_FILE = "weight-hashes.json"
CHUNK = 1 << 20


def model_identity(spec: str, revision: str | None = None, kind: LocalKind | None = None) -> dict[str, Any]:
    """A JSON-able description of exactly which weights ``spec`` names (see the module docstring); ``kind`` is
    the handle's reading of the spec (``core.engine.model_kind``), read here only when not given."""
    from core.engine.bundled import BUNDLED_MODELS, TINY_RANDOM

    spec = spec.strip()
    kind = kind or model_kind(spec)
    if spec == TINY_RANDOM:
        return {"kind": "bundled", "name": spec, "weights": "random, seed 0"}
    if kind == "bundled":
        package = BUNDLED_MODELS[spec].package.replace("_", "-")
        return {"kind": "bundled", "name": spec, "package": package, "package_version": _package_version(package)}
    if kind == "local":
        path = Path(spec).expanduser()
        return {"kind": "local", "path": str(path.resolve()), "content_sha256": folder_digest(path)}
    return {"kind": "hub", "id": spec, "revision": revision or "main", "commit": cached_hub_commit(spec, revision)}


def identity_line(identity: dict[str, Any]) -> str:
    """Which weights an identity names, in one plain line (the sidebar shows it beside the model choice)."""
    kind = identity.get("kind")
    if kind == "bundled":
        made = identity.get("weights") or " ".join(
            str(part) for part in (identity.get("package"), identity.get("package_version")) if part
        )
        return f"bundled weights ({made})" if made else "bundled weights"
    if kind == "local":
        return f"local folder, contents sha256 {str(identity.get('content_sha256', ''))[:12]}…"
    if kind == "hub":
        commit = identity.get("commit")
        at = f"commit {str(commit)[:10]}" if commit else "not in the local hub cache yet"
        return f"hub revision {identity.get('revision', 'main')} ({at})"
    if kind == "served":
        return f"served as {identity.get('served_model')} by {identity.get('endpoint')} (weights not verifiable)"
    return "unknown weights"


def identity_digest(identity: dict[str, Any]) -> str:
    """A short stable digest of an identity, for run keys."""
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def folder_digest(folder: Path) -> str:
    """sha256 over the names and contents of every file in a checkout folder (hidden files left out)."""
    digest = hashlib.sha256()
    cache = _load_hash_cache()
    changed = False
    for file in sorted(p for p in folder.rglob("*") if p.is_file() and not _hidden(p.relative_to(folder))):
        file_hash, fresh = _file_hash(file, cache)
        changed = changed or fresh
        digest.update(str(file.relative_to(folder)).encode() + b"\0" + file_hash.encode() + b"\n")
    if changed:
        _save_hash_cache(cache)
    return digest.hexdigest()


def cached_hub_commit(repo_id: str, revision: str | None) -> str | None:
    """The commit a hub revision resolved to, read from the local hub cache; None when not cached."""
    try:
        from huggingface_hub.constants import HF_HUB_CACHE
    except ImportError:  # pragma: no cover - huggingface_hub ships with transformers
        return None
    revision = revision or "main"
    if len(revision) == 40 and all(c in "0123456789abcdef" for c in revision):
        return revision
    ref = Path(HF_HUB_CACHE) / f"models--{repo_id.replace('/', '--')}" / "refs" / revision
    try:
        return ref.read_text().strip() or None
    except OSError:
        return None


def _hidden(relative: Path) -> bool:
    return any(part.startswith(".") for part in relative.parts)


def _package_version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def _file_hash(file: Path, cache: dict[str, dict[str, Any]]) -> tuple[str, bool]:
    stat = file.stat()
    key = str(file.resolve())
    entry = cache.get(key)
    if entry and entry.get("size") == stat.st_size and entry.get("mtime_ns") == stat.st_mtime_ns:
        return str(entry["sha256"]), False
    digest = hashlib.sha256()
    with file.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    cache[key] = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": digest.hexdigest()}
    return digest.hexdigest(), True


def _cache_path() -> Path:
    return cache_dir() / HASH_CACHE_FILE


def _load_hash_cache() -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(_cache_path().read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save_hash_cache(cache: dict[str, dict[str, Any]]) -> None:
    try:
        write_atomic(_cache_path(), json.dumps(cache))
    except OutputError:
        pass  # a cache: the next run hashes the weights again
