"""What kind of model a spec names: the one place that reads a model's text to tell.

A spec is a bundled name (``smollm2-135m``, ``gemma-3-270m``, the test model ``tiny-random``), a local checkpoint
folder, or a hub id; a model behind a server is never named by text alone (it is connected, see
``core.engine.handle``). The handle classifies its spec once, here, and hands the kind to what loads the model,
reads its identity and plans its start token, so none of them decides again what the text is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

LocalKind = Literal["bundled", "local", "hub"]
"""The kinds a spec names by itself (the handle adds ``served``)."""


def model_kind(spec: str) -> LocalKind:
    """``bundled`` for a bundled name, ``local`` for an existing folder, otherwise ``hub`` (checked on loading)."""
    from core.engine.bundled import BUNDLED_MODELS, TINY_RANDOM

    spec = spec.strip()
    if spec in BUNDLED_MODELS or spec == TINY_RANDOM:
        return "bundled"
    return "local" if Path(spec).expanduser().is_dir() else "hub"
