"""Whether this CPU computes bfloat16 natively, and how much slower bfloat16 is here when it does not.

Without native support (AVX-512 BF16 or AMX on x86, the BF16 extension on Arm) torch converts every bfloat16
operand through float32, and a matmul runs tens of times slower than in float32, where a CPU with native
support runs it faster. So ``--dtype bfloat16`` on such a CPU is told so once, with the slowdown measured on
this machine (a probe of about 50 ms, kept per machine and torch version), and ``auto`` never picks bfloat16 on
a CPU. ``$LEAKLENS_CPU_BFLOAT16`` (``native`` or ``emulated``) overrides what the CPU's flags say, so the slow
path can be tested on any machine.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import time
from functools import cache
from pathlib import Path

import torch

OVERRIDE_ENV_VAR = "LEAKLENS_CPU_BFLOAT16"
NATIVE_FLAGS = frozenset({"avx512_bf16", "amx_bf16", "bf16"})
"""CPU flags (``/proc/cpuinfo``) under which bfloat16 matmuls run natively: x86's AVX-512 BF16 and AMX, Arm's BF16."""
PROBE_SHAPE = (64, 576, 576)
"""A matmul shaped like the bundled model's attention projections, small enough that three emulated runs
take about 50 ms."""
SLOW_RATIO = 2.0
"""Without readable CPU flags, a probe at least this many times slower than float32 counts as emulated."""


def cpu_flags() -> frozenset[str] | None:
    """The CPU's feature flags from ``/proc/cpuinfo`` (``flags`` on x86, ``Features`` on Arm); None where unreadable."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name.strip() in ("flags", "Features"):
            return frozenset(value.split())
    return None


def cpu_name() -> str:
    """The CPU's model name, for the probe's key and a benchmark's machine record."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


@cache
def native_bfloat16() -> bool:
    """True when this CPU runs bfloat16 matmuls natively: the override, else the CPU's flags, else the probe."""
    override = os.environ.get(OVERRIDE_ENV_VAR, "").strip().lower()
    if override in ("native", "emulated"):
        return override == "native"
    flags = cpu_flags()
    if flags is not None:
        return bool(flags & NATIVE_FLAGS)
    return slowdown() < SLOW_RATIO


def bfloat16_support() -> dict[str, object]:
    """What a benchmark records about bfloat16 on this CPU: native or emulated, why, and the flags seen."""
    flags = cpu_flags()
    override = os.environ.get(OVERRIDE_ENV_VAR, "").strip().lower() or None
    return {
        "bfloat16": "native" if native_bfloat16() else "emulated",
        "decided_by": f"${OVERRIDE_ENV_VAR}"
        if override in ("native", "emulated")
        else "cpu flags"
        if flags
        else "probe",
        "native_flags_present": sorted(flags & NATIVE_FLAGS) if flags else [],
    }


def _probe_seconds(dtype: torch.dtype) -> float:
    m, k, n = PROBE_SHAPE
    generator = torch.Generator().manual_seed(0)
    a = torch.randn(m, k, generator=generator).to(dtype)
    b = torch.randn(k, n, generator=generator).to(dtype)
    a @ b
    best = float("inf")
    for _ in range(2):
        start = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - start)
    return best


def _probe_path() -> Path:
    from core.config import cache_subdir

    key = hashlib.sha256(f"{cpu_name()}|{torch.__version__}|{torch.get_num_threads()}".encode()).hexdigest()[:16]
    return cache_subdir("machine") / f"bfloat16-probe-{key}.json"


@cache
def slowdown() -> float:
    """How many times slower a bfloat16 matmul is than float32 on this machine (measured once, then kept)."""
    from core.errors import LeakLensError
    from core.files.outputs import write_atomic

    try:
        path: Path | None = _probe_path()
    except LeakLensError:
        path = None  # no cache folder: probe every time, which costs 50 ms
    if path is not None and path.is_file():
        try:
            ratio = float(json.loads(path.read_text(encoding="utf-8"))["slowdown"])
            if ratio > 0:
                return ratio
        except (OSError, ValueError, KeyError, TypeError):
            pass  # a damaged record is measured again and replaced
    ratio = _probe_seconds(torch.bfloat16) / max(_probe_seconds(torch.float32), 1e-9)
    if path is not None:
        try:
            write_atomic(path, json.dumps({"slowdown": ratio, "cpu": cpu_name(), "torch": torch.__version__}) + "\n")
        except LeakLensError:
            pass  # an unwritable cache costs the probe again next time, nothing more
    return ratio


def bfloat16_warning(device: str, dtype: str) -> str | None:
    """One line for a user who asked for bfloat16 on a CPU that emulates it; None when nothing needs saying."""
    if device != "cpu" or dtype != "bfloat16" or native_bfloat16():
        return None
    ratio = slowdown()
    measured = f"about {ratio:.0f}× slower than float32 (measured here)" if ratio >= SLOW_RATIO else "much slower"
    return (
        f"this CPU has no native bfloat16, so --dtype bfloat16 runs {measured}; --dtype float32 (or auto) is "
        "faster and more precise here."
    )
