"""Real-browser test of the Dataset inference page: a run on the WikiMIA sample's halves leads with its verdict."""

from __future__ import annotations

import pytest

from tests.browser.helpers import exception_texts, full_page_screenshot, open_page, wait_for_streamlit

pytestmark = pytest.mark.browser


def test_dataset_inference_page_runs_and_leads_with_the_verdict(app_url, browser_page, screenshot_dir):
    page = browser_page
    open_page(page, f"{app_url}/Dataset_inference")
    assert exception_texts(page) == []
    page.get_by_text("Texts, splits and detectors").click()
    size = page.get_by_label("Texts per set (0 = all)", exact=True)
    size.fill("40")
    size.press("Enter")
    wait_for_streamlit(page)
    page.get_by_role("button", name="Run dataset inference").click()
    wait_for_streamlit(page, timeout_ms=240_000)
    page.wait_for_selector(".leaklens-finding", timeout=60_000)
    page.wait_for_function("document.querySelectorAll('.js-plotly-plot .main-svg').length >= 3", timeout=60_000)
    assert exception_texts(page) == []
    banner = page.locator(".leaklens-finding").first
    assert "wording alone" in banner.inner_text()  # a date split: confounded, not "strong"
    # the verdict was scrolled into view, just below Streamlit's header
    page.wait_for_function(
        "() => { const r = document.querySelector('.leaklens-finding').getBoundingClientRect();"
        " return r.top > 40 && r.top < 120; }", timeout=10_000,
    )
    charts = page.locator(".js-plotly-plot")
    assert charts.count() == 3
    assert "combined p = " in charts.nth(1).inner_text()
    page.screenshot(path=str(screenshot_dir / "dataset_inference_1440x900.png"))
    full_page_screenshot(page, str(screenshot_dir / "dataset_inference_full_1440.png"))
