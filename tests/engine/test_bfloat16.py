"""bfloat16 on a CPU: whether it is native comes from the override, else the CPU's flags; asking for it where it
is emulated warns once with the measured slowdown; ``auto`` never picks it on a CPU; the probe is kept per
machine; and the dtype smoke benchmark, with bfloat16 really emulated, finishes in seconds and says so."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import pytest

from core.cli import main
from core.config import PROJECT_ROOT
from core.engine import bfloat16
from core.engine.setup import resolve_setup


@pytest.fixture(autouse=True)
def _fresh_answers(monkeypatch, tmp_path):
    """Each test decides support anew, with a cache of its own."""
    monkeypatch.setenv("LEAKLENS_CACHE", str(tmp_path / "cache"))
    decided, measured = bfloat16.native_bfloat16, bfloat16.slowdown
    decided.cache_clear()
    measured.cache_clear()
    yield
    decided.cache_clear()  # the test's answers are not left for later ones
    measured.cache_clear()


def test_the_override_decides_over_the_cpu_flags(monkeypatch):
    monkeypatch.setenv(bfloat16.OVERRIDE_ENV_VAR, "emulated")
    assert bfloat16.native_bfloat16() is False
    assert bfloat16.bfloat16_support()["decided_by"] == f"${bfloat16.OVERRIDE_ENV_VAR}"
    bfloat16.native_bfloat16.cache_clear()
    monkeypatch.setenv(bfloat16.OVERRIDE_ENV_VAR, "native")
    assert bfloat16.native_bfloat16() is True


def test_without_the_override_the_flags_decide(monkeypatch):
    monkeypatch.delenv(bfloat16.OVERRIDE_ENV_VAR, raising=False)
    flags = bfloat16.cpu_flags()
    support = bfloat16.bfloat16_support()
    if flags is None:  # no /proc/cpuinfo: the probe decides
        assert support["decided_by"] == "probe"
        assert bfloat16.native_bfloat16() is (bfloat16.slowdown() < bfloat16.SLOW_RATIO)
        return
    assert bfloat16.native_bfloat16() is bool(flags & bfloat16.NATIVE_FLAGS)
    assert support["decided_by"] == "cpu flags"
    assert support["native_flags_present"] == sorted(flags & bfloat16.NATIVE_FLAGS)


def test_the_warning_names_the_measured_slowdown_only_for_bfloat16_on_an_emulating_cpu(monkeypatch):
    monkeypatch.setenv(bfloat16.OVERRIDE_ENV_VAR, "emulated")
    monkeypatch.setattr(bfloat16, "slowdown", lambda: 65.4)
    note = bfloat16.bfloat16_warning("cpu", "bfloat16")
    assert note is not None and "no native bfloat16" in note and "about 65× slower than float32" in note
    assert "\n" not in note
    assert bfloat16.bfloat16_warning("cpu", "float32") is None
    assert bfloat16.bfloat16_warning("cuda", "bfloat16") is None
    bfloat16.native_bfloat16.cache_clear()
    monkeypatch.setenv(bfloat16.OVERRIDE_ENV_VAR, "native")
    assert bfloat16.bfloat16_warning("cpu", "bfloat16") is None


@pytest.mark.parametrize("support", ["native", "emulated"])
def test_auto_never_picks_bfloat16_on_a_cpu(monkeypatch, support):
    monkeypatch.setenv(bfloat16.OVERRIDE_ENV_VAR, support)
    assert resolve_setup("cpu", "auto").dtype == "float32"


def test_the_probe_is_measured_once_and_kept_and_a_damaged_record_is_measured_again(monkeypatch):
    calls = []
    real = bfloat16._probe_seconds

    def counted(dtype):
        calls.append(dtype)
        return real(dtype)

    monkeypatch.setattr(bfloat16, "_probe_seconds", counted)
    first = bfloat16.slowdown()
    assert first > 0 and len(calls) == 2
    kept = bfloat16._probe_path()
    assert json.loads(kept.read_text())["slowdown"] == pytest.approx(first)
    bfloat16.slowdown.cache_clear()
    assert bfloat16.slowdown() == pytest.approx(first) and len(calls) == 2  # read back, not measured
    kept.write_text("{not json")
    bfloat16.slowdown.cache_clear()
    assert bfloat16.slowdown() > 0 and len(calls) == 4
    assert json.loads(kept.read_text())["slowdown"] > 0  # replaced by the new measurement


def test_the_cli_says_it_once_in_one_warning_line(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv(bfloat16.OVERRIDE_ENV_VAR, "emulated")
    monkeypatch.setattr(bfloat16, "slowdown", lambda: 40.0)
    passage = tmp_path / "passage.txt"
    passage.write_text("A short passage to score.")
    args = ["inspect", "--file", str(passage), "--model", "tiny-random", "--dtype", "bfloat16", "--no-store"]
    assert main(args) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if "bfloat16" in line]
    assert lines == [
        "warning: this CPU has no native bfloat16, so --dtype bfloat16 runs about 40× slower than float32 "
        "(measured here); --dtype float32 (or auto) is faster and more precise here."
    ]


def test_the_dtype_smoke_benchmark_finishes_where_bfloat16_is_really_emulated(tmp_path):
    """oneDNN capped at AVX2 emulates bfloat16 on any x86 CPU (a real 65× slowdown where it is native), and the
    override tells LeakLens so: the smoke run still completes and records it as emulated."""
    env = {
        **os.environ,
        "ONEDNN_MAX_CPU_ISA": "AVX2",
        bfloat16.OVERRIDE_ENV_VAR: "emulated",
        "LEAKLENS_CACHE": str(tmp_path / "cache"),
    }
    command = [sys.executable, str(PROJECT_ROOT / "bench" / "dtype.py"), "--quick", "--out", str(tmp_path)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=110, cwd=PROJECT_ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    (path,) = tmp_path.glob("dtype-*.json")
    result = json.loads(path.read_text())
    assert result["summary"]["cpu_bfloat16"] == "emulated"
    assert result["machine"]["cpu_bfloat16"]["decided_by"] == f"${bfloat16.OVERRIDE_ENV_VAR}"
    if platform.machine() in ("x86_64", "AMD64"):
        assert result["summary"]["matmul_speedup_bf16"] < 0.5  # the emulation was real, not only declared
