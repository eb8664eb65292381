"""``make setup`` converts the bundled model before the first question (``python -m core.engine.bundled``): on a
cache that already holds it the command converts nothing and names where it is."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.config import CACHE_ENV_VAR, cache_subdir

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_preparing_the_bundled_model_keeps_a_converted_copy_and_names_it(smollm2):
    target = cache_subdir("models") / "smollm2-135m"
    weights = target / "model.safetensors"
    before = weights.stat().st_mtime_ns
    done = subprocess.run(
        [sys.executable, "-m", "core.engine.bundled"],
        cwd=REPO,
        env={**os.environ, CACHE_ENV_VAR: str(cache_subdir("models").parent)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert f"smollm2-135m ready in {target}" in done.stderr
    assert weights.stat().st_mtime_ns == before


def test_the_makefile_prepares_the_model_where_the_code_looks_for_it():
    makefile = (REPO / "Makefile").read_text()
    assert "models/smollm2-135m/.leaklens-complete" in makefile
    from core.engine import bundled

    assert bundled._COMPLETE_MARKER == ".leaklens-complete"
    assert bundled.DEFAULT_BUNDLED == "smollm2-135m"
