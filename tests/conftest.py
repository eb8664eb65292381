"""Shared fixtures: real models, loaded once per test session."""

from __future__ import annotations

import os

# Tests never reach a hub: set before transformers / datasets / huggingface_hub read their settings.
for _var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ[_var] = "1"
# Before torch loads: passive OpenMP waits keep shared-CPU runs from slowing about tenfold.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from collections.abc import Iterator  # noqa: E402

import pytest  # noqa: E402

from core.config import PROJECT_ROOT  # noqa: E402
from core.engine.models import LoadedModel, load_model  # noqa: E402


@pytest.fixture(scope="session")
def tiny_lm() -> LoadedModel:
    """2-layer random Llama over the SmolLM2 vocabulary: fast, deterministic, meaningless scores."""
    return load_model("tiny-random")


@pytest.fixture(scope="session")
def smollm2() -> LoadedModel:
    """The bundled SmolLM2-135M (dequantised once into the LeakLens cache)."""
    return load_model("smollm2-135m")


@pytest.fixture(scope="session")
def vllm_endpoint(tmp_path_factory) -> Iterator[str]:
    """One real vLLM server for the session (tests/helpers/vllm_server.py); its API key is in the
    environment variable ``KEY_VAR`` names. Yields the base URL (``http://127.0.0.1:PORT/v1``)."""
    from tests.helpers.vllm_server import API_KEY, KEY_VAR, vllm_server

    os.environ[KEY_VAR] = API_KEY
    running = os.environ.get("LEAKLENS_TEST_VLLM_URL")  # a server already started with server_command()
    if running:
        yield running
        return
    with vllm_server(PROJECT_ROOT / "test-output" / "vllm") as (url, _process):
        yield url


@pytest.fixture(autouse=True)
def _private_results_store(tmp_path, monkeypatch):
    """Commands store by default: keep every test's runs out of the user's own results store."""
    if not os.environ.get("LEAKLENS_STORE"):
        monkeypatch.setenv("LEAKLENS_STORE", str(tmp_path / "default-results.sqlite"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that loads the bundled 135M model or starts vLLM is slow wherever it lives: `make test-fast` skips it."""
    for item in items:
        if {"smollm2", "vllm_endpoint"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
