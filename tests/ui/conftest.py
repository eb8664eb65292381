"""Shared AppTest setup: each page runs on the tiny random model and writes to a temporary store."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture()
def home(monkeypatch) -> AppTest:
    """The app's home page on the tiny model, run once (fails on any exception it raised)."""
    monkeypatch.setenv("LEAKLENS_DEFAULT_MODEL", "tiny-random")
    app = AppTest.from_file(str(REPO / "app.py"), default_timeout=240)
    app.run()
    assert not app.exception, app.exception
    return app


@pytest.fixture()
def store_path(tmp_path, monkeypatch) -> Path:
    """A fresh results store for one test, with the tiny model as the pages' default."""
    path = tmp_path / "results.sqlite"
    monkeypatch.setenv("LEAKLENS_STORE", str(path))
    monkeypatch.setenv("LEAKLENS_DEFAULT_MODEL", "tiny-random")
    return path


@pytest.fixture()
def open_page(store_path) -> Callable[..., AppTest]:
    """``open_page("2_Membership_benchmark.py")`` runs that page once and fails on any exception it raised."""

    def run(file_name: str, timeout: float = 240) -> AppTest:
        app = AppTest.from_file(str(REPO / "pages" / file_name), default_timeout=timeout)
        app.run()
        assert not app.exception, app.exception
        return app

    return run
