"""One real vLLM server (OpenAI-compatible API) on a free local port, serving the bundled SmolLM2 in float32.

It runs from its own venv (``.venv-vllm``, ``make setup-vllm``): vLLM pins its own transformers. The server
requires an API key, so the tests that pass one and the test that forgets it both meet the real check.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from core.config import PROJECT_ROOT
from core.engine.bundled import BUNDLED_MODELS, ensure_bundled_converted

VLLM_PYTHON = PROJECT_ROOT / ".venv-vllm" / "bin" / "python"
START_TIMEOUT_S = 900
"""vLLM loads the model, then profiles and warms up: 1.5–2.5 min on 2 busy cores; more under heavy load."""
SERVED_NAME = "smollm2-served"
API_KEY = "leaklens-test-key"
KEY_VAR = "LEAKLENS_TEST_VLLM_KEY"
MAX_MODEL_LEN = 1024


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _healthy(root: str) -> bool:
    try:
        with urllib.request.urlopen(f"{root}/health", timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        return False


def server_command(port: int) -> list[str]:
    folder = ensure_bundled_converted(BUNDLED_MODELS["smollm2-135m"])
    return [
        str(VLLM_PYTHON),
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        str(folder),
        "--dtype",
        "float32",
        "--max-model-len",
        str(MAX_MODEL_LEN),
        "--enforce-eager",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--served-model-name",
        SERVED_NAME,
        "--max-logprobs",
        "20",
        "--api-key",
        API_KEY,
    ]


@contextmanager
def vllm_server(log_dir: Path, port: int | None = None) -> Iterator[tuple[str, subprocess.Popen]]:
    """Start the server, wait until it answers, yield (base URL ending in /v1, process); stop it after."""
    if not VLLM_PYTHON.exists():
        raise RuntimeError(f"{VLLM_PYTHON} is missing: run `make setup-vllm` (make test does).")
    port = port or free_port()
    root = f"http://127.0.0.1:{port}"
    log_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "2", "PYTHONUNBUFFERED": "1", "OMP_WAIT_POLICY": "PASSIVE"}
    with open(log_dir / f"vllm-{port}.log", "ab") as log:
        process = subprocess.Popen(
            server_command(port), env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _healthy(root):
            if process.poll() is not None:
                raise RuntimeError(f"vLLM exited with {process.returncode}; see {log_dir}/vllm-{port}.log")
            if time.monotonic() > deadline:
                raise RuntimeError(f"vLLM did not start within {START_TIMEOUT_S} s; see {log_dir}/vllm-{port}.log")
            time.sleep(2)
        yield f"{root}/v1", process
    finally:
        stop(process)


def stop(process: subprocess.Popen) -> None:
    """Stop the server and its engine process (its own process group)."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=60)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait(timeout=30)
