"""Fixtures for the overlap tests: a corpus with planted copies, and a real Elasticsearch server.

``es_url`` uses ``$ES_URL`` when it is set; otherwise it starts the local Elasticsearch 7.9.2 OSS build
(``scripts/es_start.sh``: installed by ``scripts/es_install.sh``, run as ``nobody`` on 127.0.0.1) once per
session and stops it at the end.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.overlap.corpus import Corpus, write_corpus

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    return write_corpus(tmp_path_factory.mktemp("overlap-data"))


@pytest.fixture(scope="session")
def es_url() -> Iterator[str]:
    url = os.environ.get("ES_URL")
    if url:
        yield url
        return
    started = subprocess.run(
        ["bash", str(REPO / "scripts" / "es_start.sh")], capture_output=True, text=True, timeout=300
    )
    if started.returncode != 0:
        raise RuntimeError(f"Could not start the local Elasticsearch:\n{started.stderr[-3000:]}")
    values = dict(line.split("=", 1) for line in started.stdout.split() if "=" in line)
    try:
        yield values["ES_URL"]
    finally:
        subprocess.run(["bash", str(REPO / "scripts" / "es_stop.sh"), values["ES_WORKDIR"]], timeout=120)


@pytest.fixture()
def index_name() -> str:
    return f"t-{uuid.uuid4().hex[:10]}"


# -- shared indexes, built once per session ----------------------------------------------------------
from core.overlap.backends import OverlapBackend, get_backend  # noqa: E402
from core.overlap.indexing import build_index  # noqa: E402
from core.overlap.sources import EvalSet, TrainingSource, load_eval_set  # noqa: E402

TEXT_INDEX = "corpus-text"


def training_sources(corpus: Corpus) -> list[TrainingSource]:
    return [
        TrainingSource(str(corpus.plain_path), text_field="text"),
        TrainingSource(str(corpus.chat_path), messages_field="messages", query_filter=("role", "user")),
    ]


@pytest.fixture(scope="session")
def test_set(corpus: Corpus) -> EvalSet:
    return load_eval_set(str(corpus.test_path), "question", id_field="id")


@pytest.fixture(scope="session")
def embedded(tmp_path_factory: pytest.TempPathFactory, corpus: Corpus) -> OverlapBackend:
    """Embedded backend with the corpus indexed as ``corpus-text``."""
    backend = get_backend("embedded", root=tmp_path_factory.mktemp("indexes"))
    build_index(backend, TEXT_INDEX, training_sources(corpus))
    return backend


@pytest.fixture(scope="session")
def elastic(es_url: str, corpus: Corpus) -> Iterator[OverlapBackend]:
    """Elasticsearch backend with the corpus indexed as ``corpus-text`` (removed at the end)."""
    backend = get_backend("elasticsearch", es_url=es_url)
    build_index(backend, TEXT_INDEX, training_sources(corpus), overwrite=True)
    yield backend
    backend.delete(TEXT_INDEX)
