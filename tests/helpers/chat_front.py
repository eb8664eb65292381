"""A front before the real vLLM server that answers only what a hosted chat API answers.

Forwarded: ``GET /v1/models`` and ``POST /v1/chat/completions`` whose body a hosted API would take. Refused:
every other path (``/v1/completions``, ``/tokenize``, ``/version``: 404), and a chat body asking for what hosted
APIs never give (``echo``, ``prompt_logprobs``, ``continue_final_message``, ``add_generation_prompt``, more than
20 ``top_logprobs``: 400). With ``logprobs=False`` it is an API that returns no log-probs at all: asking for them
is a 400. The answers themselves always come from vLLM.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOSTED_REFUSES = ("echo", "prompt_logprobs", "continue_final_message", "add_generation_prompt")
MAX_TOP_LOGPROBS = 20


@contextmanager
def chat_front(upstream_root: str, *, logprobs: bool = True) -> Iterator[tuple[str, list[str]]]:
    """Yields (the front's base URL ending in /v1, the log of every path asked) for ``upstream_root`` (no /v1)."""
    asked: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # quiet
            pass

        def _reply(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _refuse(self, status: int, message: str) -> None:
            self._reply(status, json.dumps({"error": {"message": message}}).encode())

        def _forward(self, body: bytes | None) -> None:
            headers = {k: v for k, v in self.headers.items() if k.lower() in ("authorization", "content-type")}
            request = urllib.request.Request(upstream_root + self.path, data=body, headers=headers, method=self.command)
            try:
                with urllib.request.urlopen(request, timeout=600) as response:
                    self._reply(response.status, response.read())
            except urllib.error.HTTPError as error:
                self._reply(error.code, error.read())

        def do_GET(self) -> None:
            asked.append(f"GET {self.path}")
            if self.path == "/v1/models":
                self._forward(None)
            else:
                self._refuse(404, f"Unknown path {self.path}")

        def do_POST(self) -> None:
            asked.append(f"POST {self.path}")
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            if self.path != "/v1/chat/completions":
                self._refuse(404, f"Unknown path {self.path}")
                return
            try:
                data = json.loads(body or b"{}")
            except ValueError:
                self._refuse(400, "malformed JSON")
                return
            extras = [key for key in HOSTED_REFUSES if key in data]
            if extras:
                self._refuse(400, f"Unrecognized request argument supplied: {', '.join(extras)}")
            elif int(data.get("top_logprobs") or 0) > MAX_TOP_LOGPROBS:
                self._refuse(400, f"top_logprobs must be at most {MAX_TOP_LOGPROBS}")
            elif not logprobs and (data.get("logprobs") or data.get("top_logprobs")):
                self._refuse(400, "This model does not support logprobs")
            else:
                self._forward(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", asked
    finally:
        server.shutdown()
        server.server_close()
