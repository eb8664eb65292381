"""``--timeout`` is one deadline over a whole request, retries and waits included, against a real local HTTP
server that misbehaves on purpose: a reply trickling in a byte at a time, and a 429 asking to wait an hour."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler

import pytest

from core.cli import main
from core.engine.served import Endpoint, ServedModelError, new_session, request_json
from tests.helpers.local_server import serving

TIMEOUT_S = 2.0


@contextmanager
def misbehaving(kind: str) -> Iterator[str]:
    """A server whose every answer is a ``kind`` fault: ``trickle`` or ``busy``."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def do_GET(self) -> None:
            if kind == "busy":
                self.send_response(429)
                self.send_header("Retry-After", "3600")
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")
                return
            body = b'{"data": []}' + b" " * 200
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                for byte in body:  # one byte every 0.2 s: each within any socket timeout, the whole in 40 s
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(0.2)
            except (BrokenPipeError, ConnectionResetError):
                pass

    with serving(Handler) as url:
        yield url


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("trickle", f"did not answer within {TIMEOUT_S:g} s (--timeout)"),
        ("busy", "asks to wait 3600 s, past the 2 s --timeout"),
    ],
)
def test_the_timeout_bounds_the_whole_request(kind, expected):
    with misbehaving(kind) as url:
        started = time.monotonic()
        with pytest.raises(ServedModelError) as info:
            request_json(new_session(), "GET", f"{url}/models", Endpoint(url, timeout_s=TIMEOUT_S))
        took = time.monotonic() - started
    assert expected in str(info.value)
    assert took < TIMEOUT_S + 1.5, took


@pytest.mark.parametrize("value", ["nan", "inf", "0", "-1"])
def test_a_timeout_that_is_no_positive_number_is_one_line(value, capsys):
    argv = ["inspect", "--endpoint", "http://127.0.0.1:9/v1", "--timeout", value, "--text", "Four score."]
    assert main([*argv, "--no-store"]) == 2
    err = capsys.readouterr().err
    assert "--timeout must be a positive number of seconds" in err and "Traceback" not in err
