"""Real-browser smoke tests of the app shell: home page, and navigation on a fresh server."""

from __future__ import annotations

import pytest

from tests.browser.helpers import exception_texts, full_page_screenshot, open_page
from tests.browser.server import streamlit_server

pytestmark = pytest.mark.browser

NAV = '[data-testid="stSidebarNav"]'


def test_home_page_shows_model_and_page_cards(app_url, browser_page, screenshot_dir):
    open_page(browser_page, app_url)
    main = browser_page.locator('[data-testid="stMain"]')
    main.get_by_text("Inspect a passage").first.wait_for(timeout=60_000)  # the cards' links can draw last
    body = main.inner_text()
    assert "Has this language model seen this text before?" in body
    assert "tiny-random" in body
    assert "CPU" in body or "CUDA" in body
    assert "Inspect a passage" in body
    assert exception_texts(browser_page) == []
    nav = browser_page.locator(NAV).inner_text()
    assert "Home" in nav
    assert "Inspect a passage" in nav
    full_page_screenshot(browser_page, str(screenshot_dir / "home_1440x900.png"))


def test_first_visitor_opening_a_page_url_gets_the_app_navigation(browser_page, tmp_path):
    # A server nobody has visited yet: the first session lands directly on a page, not on the home page.
    with streamlit_server(tmp_path) as fresh_url:
        open_page(browser_page, f"{fresh_url}/Inspect_a_passage")
        nav = browser_page.locator(NAV).inner_text()
        assert "Home" in nav, nav
        assert "Inspect a passage" in nav, nav
        assert "app" not in nav.split("\n")
        assert browser_page.locator("h1").first.inner_text() == "Inspect a passage"
        assert browser_page.url.endswith("/Inspect_a_passage")
        assert exception_texts(browser_page) == []
