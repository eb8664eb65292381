"""A gateway in front of the real vLLM server, as a rate limiter or a faulty proxy would sit there.

It forwards every request to the server unchanged, except that completion requests follow a plan, one
step per request: ``"pass"``, ``"429"`` or ``"503"`` (turned away with ``Retry-After``), ``"garble"``
(the server's answer cut in half) or ``"trickle"`` (the server's answer sent in ``TRICKLE_PIECES`` pieces,
``TRICKLE_GAP_S`` apart, as a congested link would deliver it). It records when each completion request
arrived, so a test can see the client waited as told. The model's answers always come from vLLM itself.
``plan.close()`` shuts the gateway mid-run: to the client the server is gone (connections refused) until a
new gateway opens on the same ``port``.
"""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

RETRY_AFTER_S = 1
TRICKLE_PIECES = 8
TRICKLE_GAP_S = 0.25


class _Plan:
    def __init__(self, steps: list[str]) -> None:
        self.steps = list(steps)
        self.arrivals: list[tuple[float, str]] = []
        self.lock = threading.Lock()
        self.close: Callable[[], None] = lambda: None

    def next(self) -> str:
        with self.lock:
            step = self.steps.pop(0) if self.steps else "pass"
            self.arrivals.append((time.monotonic(), step))
            return step


@contextmanager
def gateway(upstream_root: str, steps: list[str], *, port: int = 0) -> Iterator[tuple[str, _Plan]]:
    """Yields (the gateway's root URL, the plan with its arrival log) for ``upstream_root`` (no ``/v1``), on
    ``port`` (default: any free one)."""
    plan = _Plan(steps)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # quiet
            pass

        def _forward(self) -> tuple[int, dict[str, str], bytes]:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            headers = {k: v for k, v in self.headers.items() if k.lower() in ("authorization", "content-type")}
            request = urllib.request.Request(upstream_root + self.path, data=body, headers=headers, method=self.command)
            try:
                with urllib.request.urlopen(request, timeout=600) as response:
                    return response.status, dict(response.headers), response.read()
            except urllib.error.HTTPError as error:
                return error.code, dict(error.headers), error.read()

        def _answer(self, status: int, body: bytes, extra: dict[str, str] | None = None, *, pieces: int = 1) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for name, value in (extra or {}).items():
                self.send_header(name, value)
            self.end_headers()
            size = max(1, -(-len(body) // pieces))  # an empty body writes nothing (a zero step would raise)
            for start in range(0, len(body), size):
                if start:
                    time.sleep(TRICKLE_GAP_S)
                self.wfile.write(body[start : start + size])
                self.wfile.flush()

        def _handle(self) -> None:
            step = plan.next() if self.path.endswith("/completions") else "pass"
            if step in ("429", "503"):
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                self._answer(int(step), b'{"error": {"message": "busy"}}', {"Retry-After": str(RETRY_AFTER_S)})
                return
            status, _, body = self._forward()
            if step == "trickle":
                self._answer(status, body, pieces=TRICKLE_PIECES)
                return
            self._answer(status, body[: len(body) // 2] if step == "garble" else body)

        do_GET = _handle
        do_POST = _handle

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    closed = threading.Event()

    def close() -> None:
        if not closed.is_set():
            closed.set()
            server.shutdown()
            server.server_close()

    plan.close = close
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", plan
    finally:
        close()
