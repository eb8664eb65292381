"""A ``streamlit run app.py`` server on a free local port, for real-browser tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SERVER_START_TIMEOUT_S = 120


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _healthy(base_url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base_url}/_stcore/health", timeout=2) as response:
            return response.status == 200 and response.read().decode().strip() == "ok"
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        return False


def _streamlit_executable() -> str:
    candidate = Path(sys.executable).with_name("streamlit")
    return str(candidate) if candidate.exists() else str(REPO / ".venv" / "bin" / "streamlit")


@contextmanager
def streamlit_server(log_dir: Path, **env_overrides: str) -> Iterator[str]:
    """Run ``streamlit run app.py`` on a free port until the block exits; yields its base URL.

    The server uses the tiny random model unless ``LEAKLENS_DEFAULT_MODEL`` is overridden; its log is
    printed when it stops (and included in the error when it fails to start).
    """
    port = _free_port()
    base_url = f"http://127.0.0.1:{port}"
    log_path = log_dir / f"streamlit-{port}.log"
    # Passive OpenMP waits: on a small CPU shared with other test processes, torch's spinning worker
    # threads otherwise slow every model pass about tenfold.
    # A results store of the server's own (beside its log) unless the caller names one: runs a test stores
    # must never land in, or be read back from, the user's store.
    env = {
        "OMP_WAIT_POLICY": "PASSIVE",
        **os.environ,
        "LEAKLENS_DEFAULT_MODEL": "tiny-random",
        "PYTHONUNBUFFERED": "1",
        "LEAKLENS_STORE": str(log_dir / f"results-{port}.sqlite"),
        **env_overrides,
    }
    command = [
        _streamlit_executable(),
        "run",
        "app.py",
        "--server.headless",
        "true",
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
    ]
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while not _healthy(base_url):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"streamlit did not become healthy on {base_url} (exit code {process.poll()}).\n"
                    f"--- server log ---\n{log_path.read_text(errors='replace')}"
                )
            time.sleep(0.3)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
        print(f"\n--- streamlit server log ({log_path}) ---\n{log_path.read_text(errors='replace')[-4000:]}")
