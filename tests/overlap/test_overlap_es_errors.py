"""Bad Elasticsearch URLs and unreachable servers: one clean ``error:`` line (details only with ``-v``), and
credentials never shown (issue 16, item 11). Run as a real process, so the logging the CLI sets up is seen."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from core.overlap.backends.elastic import redact_url
from tests.overlap.conftest import REPO


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "ELASTIC_PASSWORD": "env-s3cret"}
    return subprocess.run(
        [sys.executable, "-m", "core", *args], cwd=REPO, capture_output=True, text=True, timeout=120, env=env
    )


def test_redact_url_survives_a_bad_port_and_drops_credentials():
    assert redact_url("http://user:pw@127.0.0.1:notaport") == "http://127.0.0.1:notaport"
    assert redact_url("https://u:p@host:9200/x?y=1") == "https://host:9200/x"
    assert "pw" not in redact_url("http://user:pw@[::1")


@pytest.mark.parametrize(
    "url,expected",
    [
        (
            "http://user:pw-s3cret@127.0.0.1:notaport",
            "error: Elasticsearch URL http://127.0.0.1:notaport has an invalid port 'notaport'",
        ),
        (
            "ftp://user:pw-s3cret@127.0.0.1:9200",
            "error: Elasticsearch URL ftp://127.0.0.1:9200 must start with http:// or https://",
        ),
        ("http://user:pw-s3cret@127.0.0.1:9", "error: Elasticsearch is unreachable at http://127.0.0.1:9"),
    ],
)
@pytest.mark.slow
def test_bad_or_unreachable_url_gives_one_clean_line_without_credentials(url, expected):
    done = _cli("overlap", "list", "--backend", "elasticsearch", "--es-url", url)
    assert done.returncode == 2
    assert done.stderr.startswith(expected), done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert "s3cret" not in done.stderr + done.stdout


@pytest.mark.slow
def test_verbose_shows_details_but_never_credentials():
    done = _cli("-v", "overlap", "list", "--backend", "elasticsearch", "--es-url", "http://user:pw-s3cret@127.0.0.1:9")
    assert done.returncode == 2
    assert done.stderr.count("\n") > 1  # the client's own log of the failed requests
    assert done.stderr.rstrip().splitlines()[-1].startswith("error: Elasticsearch is unreachable at http://127.0.0.1:9")
    assert "s3cret" not in done.stderr + done.stdout
