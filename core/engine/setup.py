"""Where and in what precision a model scores: resolved before any model loads.

A stored run records its setup; resuming it under another device, dtype or revision would mix scores
computed differently under one run id, so the run loop compares setups before it adds a single sample.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import torch

from core.errors import ModelLoadError

DTYPES: dict[str, torch.dtype] = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
DTYPE_CHOICES = ("auto", *DTYPES)


@dataclass(frozen=True)
class ScoringSetup:
    """A resolved device and dtype, and the model revision asked for (None: the default branch)."""

    device: str
    """``cpu``, ``cuda`` or ``cuda:N``."""
    dtype: str
    """``float32``, ``bfloat16`` or ``float16``."""
    revision: str | None = None

    @property
    def torch_dtype(self) -> torch.dtype:
        return DTYPES[self.dtype]

    def to_dict(self) -> dict[str, str | None]:
        return {"device": self.device, "dtype": self.dtype, "revision": self.revision}

    def describe(self) -> str:
        text = f"{self.device}, {self.dtype}"
        return f"{text}, revision {self.revision}" if self.revision else text


def resolve_setup(device: str | None = "auto", dtype: str | None = "auto", revision: str | None = None) -> ScoringSetup:
    """Turn ``auto`` into this machine's choice: CUDA in bfloat16 when present, else CPU in float32 (never
    bfloat16 on a CPU: where it is emulated it is tens of times slower, see ``core.engine.bfloat16``)."""
    device = (device or "auto").strip().lower()
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    elif not re.fullmatch(r"cpu|cuda(:\d+)?", device):
        raise ModelLoadError(f"Unknown device '{device}'; use auto, cpu, cuda or cuda:N.")
    elif device.startswith("cuda") and not torch.cuda.is_available():
        raise ModelLoadError(f"Device '{device}' was asked for, but this machine has no CUDA GPU; use --device cpu.")
    dtype = (dtype or "auto").strip().lower()
    if dtype == "auto":
        dtype = "bfloat16" if device.startswith("cuda") else "float32"
    elif dtype not in DTYPES:
        raise ModelLoadError(f"Unknown dtype '{dtype}'; use one of {', '.join(DTYPE_CHOICES)}.")
    revision = (revision or "").strip() or None
    return ScoringSetup(device=device, dtype=dtype, revision=revision)
