"""Real browser: a served model chosen in the sidebar by URL, connected, and named on the home page."""

from __future__ import annotations

import pytest

from tests.browser.helpers import choose_option, exception_texts, open_page, wait_for_streamlit
from tests.browser.server import streamlit_server
from tests.helpers.vllm_server import KEY_VAR, SERVED_NAME
from ui.served_picker import SERVED_LABEL

pytestmark = pytest.mark.browser
SIDEBAR = '[data-testid="stSidebar"]'


def test_check_connection_names_the_server_and_the_home_page_says_what_it_is(
    vllm_endpoint, browser_page, screenshot_dir, tmp_path
):
    page = browser_page
    with streamlit_server(tmp_path) as url:  # started after the fixture put the key in the environment
        open_page(page, url)
        choose_option(page, "Model", SERVED_LABEL)
        sidebar = page.locator(SIDEBAR)
        sidebar.get_by_role("textbox", name="Server URL").fill(vllm_endpoint)
        sidebar.get_by_role("textbox", name="API key variable").fill(KEY_VAR)
        sidebar.get_by_role("textbox", name="API key variable").press("Enter")
        wait_for_streamlit(page)
        sidebar.get_by_role("button", name="Check connection").click()
        wait_for_streamlit(page)
        assert exception_texts(page) == []
        assert f"Connected to vLLM 0.32.0: {SERVED_NAME}" in sidebar.inner_text()
        status = page.get_by_text(f"Served at {vllm_endpoint}")
        box = status.bounding_box()
        assert box is not None
        assert 0 <= box["y"] and box["y"] + box["height"] <= 900
        page.screenshot(path=str(screenshot_dir / "served_home_1440x900.png"))
        page.set_viewport_size({"width": 1280, "height": 720})
        wait_for_streamlit(page)
        page.screenshot(path=str(screenshot_dir / "served_home_1280x720.png"))
