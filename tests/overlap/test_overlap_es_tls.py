"""Elasticsearch as ES 8/9 clusters serve it (issue 17, item 4): HTTPS with the cluster's own CA, certificate
verification on unless turned off explicitly (with a warning), and ``knn`` only from 8.4.

The TLS tests run the real client against the local 7.9.2 server behind an HTTPS proxy signed by a test
CA (``tls_proxy``); no 8.x or 9.x server runs here, so their ``knn`` path is covered only by the version gate."""

from __future__ import annotations

import logging
import os
import subprocess
import sys

import pytest

from core.errors import BackendError
from core.overlap.backends import get_backend
from core.overlap.backends.elastic import CA_CERTS_ENV, supports_knn, tls_options
from core.overlap.indexing import build_index
from core.overlap.matching import SearchSettings, search
from core.overlap.sources import TrainingSource
from tests.overlap.conftest import REPO
from tests.overlap.tls_proxy import TlsProxy

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def https_es(es_url, tmp_path_factory):
    proxy = TlsProxy(es_url, tmp_path_factory.mktemp("tls")).start()
    yield proxy
    proxy.stop()


def _cli(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "core", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
    )


@pytest.mark.parametrize(
    "version,distribution,expected",
    [
        ("7.9.2", None, False),
        ("7.17.21", "default", False),
        ("8.0.0", None, False),
        ("8.3.3", None, False),
        ("8.4.0", None, True),
        ("8.4.0-SNAPSHOT", None, True),
        ("8.15.1", None, True),
        ("9.0.0", None, True),
        ("2.11.0", "opensearch", False),
        ("", None, False),
    ],
)
def test_knn_is_used_only_from_8_4(version, distribution, expected):
    assert supports_knn(version, distribution) is expected


def test_https_cluster_with_its_ca_indexes_and_searches(https_es, es_url, corpus, test_set, index_name, monkeypatch):
    monkeypatch.delenv(CA_CERTS_ENV, raising=False)
    secure = get_backend("elasticsearch", es_url=https_es.url, es_ca_certs=str(https_es.ca_path))
    assert secure.tls_warning is None
    build_index(secure, index_name, [TrainingSource(str(corpus.plain_path))])
    try:
        over_tls = search(secure, [index_name], [test_set], SearchSettings())
        plain = search(get_backend("elasticsearch", es_url=es_url), [index_name], [test_set], SearchSettings())
        assert [m.value for m in over_tls] == [m.value for m in plain]
        assert sum(m.value == 1.0 for m in over_tls) >= len(corpus.exact_in_plain)
        monkeypatch.setenv(CA_CERTS_ENV, str(https_es.ca_path))  # the environment variable does the same
        assert index_name in [i.name for i in get_backend("elasticsearch", es_url=https_es.url).list()]
    finally:
        secure.delete(index_name)


def test_https_cluster_without_its_ca_is_refused_with_what_to_do(https_es, monkeypatch):
    monkeypatch.delenv(CA_CERTS_ENV, raising=False)
    with pytest.raises(BackendError, match=r"could not be verified.*--es-ca-certs or ELASTIC_CA_CERTS"):
        get_backend("elasticsearch", es_url=https_es.url)


def test_turning_verification_off_warns_and_connects(https_es, monkeypatch, caplog):
    monkeypatch.delenv(CA_CERTS_ENV, raising=False)
    with caplog.at_level(logging.WARNING):
        backend = get_backend("elasticsearch", es_url=https_es.url, es_verify_certs=False)
    assert backend.list() is not None
    assert "verification is off for https://127.0.0.1" in backend.tls_warning
    assert any("verification is off" in r.getMessage() for r in caplog.records)


def test_cli_flags_reach_the_backend(https_es):
    done = _cli(
        "overlap",
        "list",
        "--backend",
        "elasticsearch",
        "--es-url",
        https_es.url,
        "--es-no-verify-certs",
        **{CA_CERTS_ENV: ""},
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("warning: TLS certificate verification is off")
    done = _cli(
        "overlap",
        "list",
        "--backend",
        "elasticsearch",
        "--es-url",
        https_es.url,
        "--es-ca-certs",
        str(https_es.ca_path),
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", done.stderr


def test_a_missing_ca_file_is_one_clear_error_line(tmp_path, monkeypatch):
    missing = tmp_path / "nope.pem"
    done = _cli(
        "overlap",
        "list",
        "--backend",
        "elasticsearch",
        "--es-url",
        "https://127.0.0.1:9",
        "--es-ca-certs",
        str(missing),
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(
        f"error: CA certificate file '{missing}' (from --es-ca-certs or ELASTIC_CA_CERTS) does not exist"
    )
    monkeypatch.setenv(CA_CERTS_ENV, str(missing))
    with pytest.raises(BackendError, match="does not exist"):  # from the environment too
        tls_options("https://h:9200", None, True)


def test_plain_http_needs_no_tls_options():
    assert tls_options("http://127.0.0.1:9200", None, False) == ({}, None)
