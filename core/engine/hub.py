"""Models from a local folder or the Hugging Face hub: the offline and reachability checks, the remote-code
refusal, and the one ``from_pretrained`` call whose failures become a ``ModelLoadError`` a user can act on."""

from __future__ import annotations

import json
import os
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from core.engine.bundled import available_bundled_models
from core.errors import ModelLoadError


def from_local_or_hub(
    spec: str,
    dtype: torch.dtype,
    trust_remote_code: bool,
    revision: str | None = None,
    device_map: str | dict[str, str] | None = None,
):
    path = Path(spec).expanduser()
    looks_like_path = spec.startswith((".", "/", "~")) or path.exists()
    if looks_like_path:
        if not path.is_dir():
            raise ModelLoadError(f"Model directory '{spec}' does not exist.")
        if not (path / "config.json").exists():
            raise ModelLoadError(
                f"'{spec}' is a directory but holds no config.json; point at a Hugging Face checkpoint "
                "directory (config.json, weights, tokenizer files)."
            )
        _refuse_remote_code(spec, path / "config.json", trust_remote_code)
        return from_pretrained(str(path), dtype, trust_remote_code, spec, device_map=device_map)
    if spec.count("/") > 1 or " " in spec:
        raise ModelLoadError(
            f"'{spec}' is neither a bundled model ({', '.join(available_bundled_models())}), "
            "a local directory, nor a valid hub id (owner/name)."
        )
    extra: dict[str, object] = {"revision": revision} if revision else {}
    cached_config = _cached_hub_file(spec, "config.json", revision)
    if cached_config is not None:
        _refuse_remote_code(spec, Path(cached_config), trust_remote_code)
    if hub_offline():
        if cached_config is None:
            raise ModelLoadError(
                f"{_tried(spec)}: offline mode is on (HF_HUB_OFFLINE=1) and '{spec}' is not in the local Hugging "
                "Face cache. Unset HF_HUB_OFFLINE with network access to download it once, or pass a local "
                "checkpoint folder."
            )
    elif (problem := hub_unreachable()) is not None:
        # Fail (or fall back to the cache) at once instead of minutes of retries.
        if cached_config is None:
            raise ModelLoadError(
                f"{_tried(spec)}: the hub cannot be reached ({problem}) and '{spec}' is not in the local cache. "
                "Connect to the network (or set HF_ENDPOINT / a proxy), or pass a local checkpoint folder."
            )
        extra["local_files_only"] = True
    return from_pretrained(spec, dtype, trust_remote_code, spec, device_map=device_map, **extra)


def hub_offline() -> bool:
    """Whether the user switched the hub off (``HF_HUB_OFFLINE`` / ``TRANSFORMERS_OFFLINE``)."""
    return any(
        os.environ.get(v, "").strip().lower() in ("1", "true", "yes", "on")
        for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    )


HUB_PROBE_TIMEOUT_S = 3.0


def hub_unreachable(timeout_s: float = HUB_PROBE_TIMEOUT_S) -> str | None:
    """Why the hub's host takes no connection (e.g. ``huggingface.co:443: Name or service not known``), or None.

    One TCP connect instead of the hub client's retries, which are slow and noisy for every file that
    fails (docs/benchmarks.md, Dashboard response).
    Behind a proxy a direct connection proves nothing, so the probe is skipped there.
    """
    import socket
    from urllib.parse import urlparse

    from huggingface_hub import constants

    if any(os.environ.get(v) for v in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY")):
        return None
    url = urlparse(constants.ENDPOINT)
    host, port = url.hostname or "huggingface.co", url.port or (443 if url.scheme == "https" else 80)
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
    except OSError as exc:
        return f"{host}:{port}: {exc.strerror or type(exc).__name__}"
    return None


def _cached_hub_file(repo_id: str, filename: str, revision: str | None) -> str | None:
    """Path of a hub file already in the local cache, else None (never downloads)."""
    from huggingface_hub import try_to_load_from_cache

    try:
        found = try_to_load_from_cache(repo_id, filename, revision=revision)
    except (ValueError, OSError):
        return None
    return found if isinstance(found, str) else None


def _refuse_remote_code(spec: str, config_path: Path, trust_remote_code: bool) -> None:
    """A checkpoint whose config maps to its own Python code loads only with ``--trust-remote-code``."""
    if trust_remote_code:
        return
    try:
        auto_map = json.loads(config_path.read_text(encoding="utf-8")).get("auto_map")
    except (OSError, ValueError, AttributeError):
        return  # an unreadable config is reported by the loader itself
    if auto_map:
        code = sorted({str(v if isinstance(v, str) else v[0]).split(".")[0] + ".py" for v in auto_map.values() if v})
        raise ModelLoadError(
            f"Model '{spec}' runs its own Python code ({', '.join(code)}, named in its config.json auto_map). "
            "LeakLens runs such code only when asked: read that code, then pass --trust-remote-code (on the "
            "pages: tick 'Trust remote code')."
        )


def _tried(spec: str) -> str:
    return (
        f"Could not load model '{spec}'. Tried: bundled names ({', '.join(available_bundled_models())}), "
        "a local directory, then the Hugging Face hub"
    )


def from_pretrained(
    source: str,
    dtype: torch.dtype,
    trust_remote_code: bool,
    spec: str,
    device_map: str | dict[str, str] | None = None,
    **kwargs,
):
    placed = {} if device_map is None else {"device_map": device_map}
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, trust_remote_code=trust_remote_code, **kwargs)
        model = AutoModelForCausalLM.from_pretrained(
            source, dtype=dtype, trust_remote_code=trust_remote_code, **placed, **kwargs
        )
    except ModelLoadError:
        raise
    except (OSError, ValueError, KeyError, ImportError) as exc:
        cause = " ".join(str(exc).split())
        if "trust_remote_code" in cause:
            hint = "It runs its own Python code: read that code, then pass --trust-remote-code."
        elif Path(source).is_dir():
            hint = "The folder's files could not be loaded as a causal language model."
        elif hub_offline() or "offline" in cause.lower() or "connect" in cause.lower():
            hint = (
                "The hub is unreachable or offline mode is on; download the model once with network access "
                "or pass a local directory."
            )
        else:
            hint = (
                "Check the id's spelling; gated models need HF_TOKEN; models with custom code need --trust-remote-code."
            )
        raise ModelLoadError(f"{_tried(spec)}. {hint} (Cause: {type(exc).__name__}: {shorten(cause)})") from exc
    return tokenizer, model


def shorten(text: str, limit: int = 400) -> str:
    """``text`` cut at a word boundary, marked when cut (never mid-word, like "trust_remote_code=Tru")."""
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0] + " …"
