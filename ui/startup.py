"""torch and transformers imported once per server process, one session at a time, before any page runs.

Streamlit runs each browser session's script in its own thread. ``transformers`` resolves its classes lazily on
first use, and two threads resolving them at once fail (``cannot import name 'AutoModelForCausalLM' from
'transformers'``): the first visitors of a fresh server, or two tabs opened together, saw a blank page. Importing
the modules that use transformers (and the names LeakLens reads from it later, inside functions) under one lock
makes that first import happen in one thread; later sessions find everything imported. Every page needs these
modules anyway, so the first page waits no longer than it did.

This module imports nothing heavy itself, so ``app.py`` can call it before its own imports.
"""

from __future__ import annotations

import importlib
import threading

HEAVY_MODULES = (
    "core.engine.models",
    "core.engine.bundled",
    "core.engine.hub",
    "core.engine.scoring",
    "core.engine.generation",
    "core.engine.packing",
    "core.engine.start_token",
    "transformers.cache_utils",
)
"""The modules that import torch or transformers when they load (a test keeps this list complete)."""
LAZY_NAMES = ("AutoConfig", "AutoModelForCausalLM", "AutoTokenizer", "LlamaConfig", "LlamaForCausalLM")
"""transformers names LeakLens imports inside functions: resolved here, in the one thread."""

_LOCK = threading.Lock()
_imported = False


def import_heavy_libraries() -> None:
    """Import torch, transformers and the modules built on them once, under a process-wide lock."""
    global _imported
    if _imported:
        return
    with _LOCK:
        if _imported:
            return
        for name in HEAVY_MODULES:
            importlib.import_module(name)
        transformers = importlib.import_module("transformers")
        for name in LAZY_NAMES:
            getattr(transformers, name)
        _imported = True
