"""Shared fixtures: real models, loaded once per test session."""

from __future__ import annotations

import os

# Tests never reach a hub: set before transformers / datasets / huggingface_hub read their settings.
for _var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ[_var] = "1"
# Before torch loads: passive OpenMP waits keep shared-CPU runs from slowing about tenfold.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import pytest  # noqa: E402

from core.engine.models import LoadedModel, load_model  # noqa: E402


@pytest.fixture(scope="session")
def tiny_lm() -> LoadedModel:
    """2-layer random Llama over the SmolLM2 vocabulary: fast, deterministic, meaningless scores."""
    return load_model("tiny-random")


@pytest.fixture(scope="session")
def smollm2() -> LoadedModel:
    """The bundled SmolLM2-135M (dequantised once into the LeakLens cache)."""
    return load_model("smollm2-135m")


@pytest.fixture(autouse=True)
def _private_results_store(tmp_path, monkeypatch):
    """Commands store by default: keep every test's runs out of the user's own results store."""
    if not os.environ.get("LEAKLENS_STORE"):
        monkeypatch.setenv("LEAKLENS_STORE", str(tmp_path / "default-results.sqlite"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that loads the bundled 135M model is slow wherever it lives: `make test-fast` leaves it out."""
    for item in items:
        if "smollm2" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)
