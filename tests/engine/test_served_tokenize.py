"""A server whose ``/tokenize`` is missing or answers without usable token ids is one line that points to
``--tokenizer`` (the only way past it), never to ``--start-token``; a ``--tokenizer`` folder that does not exist
is named as a folder, not read as a hub id. Run against a real local HTTP server answering as told."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler

import pytest

from core.engine.served import Endpoint, connect
from core.errors import ModelLoadError
from tests.helpers.local_server import serving

MODELS = {"data": [{"id": "m", "root": "m", "max_model_len": 64}]}


@contextmanager
def server_whose_tokenize(answer: str) -> Iterator[str]:
    """An OpenAI-style server listing one model; ``/tokenize`` answers ``404``, token ids as ``strings``, no
    ``tokens`` key (``missing``) or ``null`` tokens."""
    bodies = {"strings": {"tokens": ["The", " cat"], "count": 2}, "missing": {"count": 2}, "null": {"tokens": None}}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def _send(self, status: int, payload: object) -> None:
            body = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            if self.path == "/v1/models":
                self._send(200, MODELS)
            else:
                self._send(404, {"detail": "Not Found"})

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path == "/tokenize" and answer in bodies:
                self._send(200, bodies[answer])
            else:
                self._send(404, {"detail": "Not Found"})

    with serving(Handler) as url:
        yield url


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("404", "has no /tokenize endpoint (404)"),
        ("strings", "answered /tokenize's tokens as ['The', ' cat'] instead of a list of token ids"),
        ("missing", "answered /tokenize's tokens as None instead of a list of token ids"),
        ("null", "answered /tokenize's tokens as None instead of a list of token ids"),
    ],
)
def test_a_server_whose_tokens_cannot_be_read_points_to_the_tokenizer_flag(answer, expected):
    with server_whose_tokenize(answer) as url, pytest.raises(ModelLoadError) as refused:
        connect(Endpoint(url))
    message = str(refused.value)
    assert expected in message, message
    assert "--tokenizer" in message
    assert "--start-token" not in message
    assert "\n" not in message


def test_a_tokenizer_folder_that_does_not_exist_is_named_as_a_folder(tmp_path):
    with server_whose_tokenize("404") as url, pytest.raises(ModelLoadError) as refused:
        connect(Endpoint(url, tokenizer=str(tmp_path / "no-such-tokenizer")))
    message = str(refused.value)
    assert f"The tokenizer folder {tmp_path / 'no-such-tokenizer'} (--tokenizer) does not exist" in message
    assert "repo" not in message.lower()
