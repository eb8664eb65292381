"""Real-browser test of a shared presentation link: a result's "Copy presentation link", opened in a new browser
context against a freshly started dashboard, shows the stored verdict and its chart without scrolling, no
input, and loads no model (the fresh server's model cache stays empty)."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

import pytest

from tests.browser.conftest import VIEWPORT
from tests.browser.helpers import (
    assert_verdict_in_viewport,
    choose_option,
    exception_texts,
    open_page,
    set_sample_size,
    visible_inputs,
    visible_jargon,
    visible_text,
    wait_for_charts,
    wait_for_streamlit,
)
from tests.browser.server import streamlit_server

pytestmark = pytest.mark.browser
N_TEXTS = 12


def _on_server(link: str, base_url: str) -> str:
    """The same link on another server (the page path and query kept)."""
    parts, base = urlsplit(link), urlsplit(base_url)
    return urlunsplit((base.scheme, base.netloc, parts.path, parts.query, ""))


def test_a_copied_presentation_link_opens_the_stored_verdict_in_a_fresh_browser_without_a_model(
    app_url, app_store, browser_page, _browser, tmp_path, screenshot_dir
):
    page = browser_page
    open_page(page, f"{app_url}/Membership_benchmark")
    choose_option(page, "Dataset: ready example", "Famous vs fresh passages (demo)")
    set_sample_size(page, N_TEXTS)
    page.get_by_role("button", name="Run benchmark").click()
    page.wait_for_selector(".leaklens-finding", timeout=240_000)
    wait_for_streamlit(page)
    headline = page.locator(".leaklens-finding").first.inner_text().splitlines()[0]

    page.get_by_role("button", name="Copy presentation link").click()
    code = page.locator('[data-testid="stPopoverBody"] code').first
    code.wait_for(timeout=30_000)
    link = code.inner_text().strip()
    assert "/Membership_benchmark?present=1&run=" in link, link

    cache, hub = tmp_path / "fresh-cache", tmp_path / "fresh-hf-home"
    cache.mkdir()
    hub.mkdir()
    with streamlit_server(
        tmp_path,
        LEAKLENS_STORE=str(app_store),
        LEAKLENS_CACHE=str(cache),
        HF_HOME=str(hub),
        LEAKLENS_DEFAULT_MODEL="smollm2-135m",
    ) as fresh_url:
        for viewport in (VIEWPORT, {"width": 1280, "height": 720}):
            context = _browser.new_context(viewport=viewport)
            try:
                shared = context.new_page()
                shared.set_default_timeout(120_000)
                open_page(shared, _on_server(link, fresh_url))
                wait_for_charts(shared, 1)
                assert exception_texts(shared) == []
                assert shared.locator(".leaklens-finding").first.inner_text().splitlines()[0] == headline
                assert_verdict_in_viewport(shared)
                chart_top = shared.evaluate(
                    "() => document.querySelector('.js-plotly-plot').getBoundingClientRect().top"
                )
                assert chart_top < viewport["height"] - 150, chart_top  # the chart is on screen, not below the fold
                assert visible_inputs(shared) == []
                assert visible_jargon(shared, charts=True) == [], visible_text(shared)
                assert "opened from a shared link" in shared.locator('[data-testid="stMain"]').inner_text()
                size_name = f"{viewport['width']}x{viewport['height']}"
                shared.screenshot(path=str(screenshot_dir / f"present_link_membership_{size_name}.png"))
            finally:
                context.close()
    assert not (cache / "models").exists(), sorted(p.name for p in cache.rglob("*"))  # no model was loaded
    assert not any(hub.iterdir())
