"""Real-browser fixtures: a ``streamlit run app.py`` server and headless Debian Chromium pages."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser.server import REPO, streamlit_server

CHROMIUM = "/usr/bin/chromium"
VIEWPORT = {"width": 1440, "height": 900}
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def app_url(tmp_path_factory: pytest.TempPathFactory, app_store: Path) -> Iterator[str]:
    """Base URL of a ``streamlit run app.py`` server on a free port, using the tiny random model and
    ``app_store``."""
    folder = tmp_path_factory.mktemp("streamlit")
    with streamlit_server(folder, LEAKLENS_STORE=str(app_store)) as base_url:
        yield base_url


@pytest.fixture(scope="session")
def _browser() -> Iterator[object]:
    """One headless Chromium per session; each test gets a fresh context (cookies, storage) from it.

    Playwright's ``launch`` always starts Chromium with a new temporary ``--user-data-dir`` of its own
    (and refuses one passed in ``args``), so every session runs on a fresh profile.
    """
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        raise RuntimeError(f"{CHROMIUM} is missing: run `bash scripts/install_test_system_deps.sh` (apt chromium).")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture()
def browser_page(_browser) -> Iterator[object]:
    """A Playwright page at 1440x900 in a new browser context (use ``page.set_viewport_size`` to change)."""
    context = _browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(120_000)
    try:
        yield page
    finally:
        context.close()


@pytest.fixture(scope="session")
def screenshot_dir() -> Path:
    """Where browser tests save screenshots (``test-output/screenshots``, kept after the run)."""
    path = REPO / "test-output" / "screenshots"
    path.mkdir(parents=True, exist_ok=True)
    return path
