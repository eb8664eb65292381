"""Shared fixtures: real models, loaded once per test session."""

from __future__ import annotations

import pytest

from core.models import LoadedModel, load_model


@pytest.fixture(scope="session")
def tiny_lm() -> LoadedModel:
    """2-layer random Llama over the SmolLM2 vocabulary: fast, deterministic, meaningless scores."""
    return load_model("tiny-random")


@pytest.fixture(scope="session")
def smollm2() -> LoadedModel:
    """The bundled SmolLM2-135M (dequantised once into the LeakLens cache)."""
    return load_model("smollm2-135m")
