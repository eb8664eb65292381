"""Real-browser tests of the Dataset inference page: a run on the WikiMIA sample's halves leads with its verdict;
the README tour step on the shipped demo leaves the verdict in view, and Present mode shows no input."""

from __future__ import annotations

import pytest

from core.data.labelled import SHARED_DATA_DIR
from tests.browser.helpers import (
    assert_verdict_in_viewport,
    exception_texts,
    full_page_screenshot,
    open_page,
    present_view,
    wait_for_charts,
    wait_for_streamlit,
)

pytestmark = pytest.mark.browser
WIKIMIA = SHARED_DATA_DIR / "wikimia_length128.parquet"


def test_dataset_inference_page_runs_and_leads_with_the_verdict(app_url, browser_page, screenshot_dir):
    page = browser_page
    open_page(page, f"{app_url}/Dataset_inference")
    assert exception_texts(page) == []
    for role in ("Suspect set", "Validation set"):  # the WikiMIA sample beside the checkout, by its path
        page.locator('[data-testid="stRadio"]').filter(has_text=role).first.get_by_text("Local path").click()
        wait_for_streamlit(page)
        path = page.get_by_label(f"{role}: file path")
        path.fill(str(WIKIMIA))
        path.press("Enter")
        wait_for_streamlit(page)
    page.get_by_text("Texts, splits and detectors").click()
    size = page.get_by_label("Texts per set (0 = all)", exact=True)
    size.fill("40")
    size.press("Enter")
    wait_for_streamlit(page)
    page.get_by_role("button", name="Run dataset inference").click()
    wait_for_streamlit(page, timeout_ms=240_000)
    page.wait_for_selector(".leaklens-finding", timeout=60_000)
    wait_for_charts(page, 3, timeout_ms=60_000)
    assert exception_texts(page) == []
    banner = page.locator(".leaklens-finding").first
    assert "wording alone" in banner.inner_text()  # a date split: confounded, not "strong"
    # the result area (its title, then the verdict) was scrolled into view, just below Streamlit's header
    page.wait_for_function(
        "() => { const area = document.querySelector('.st-key-result_area').getBoundingClientRect();"
        " const r = document.querySelector('.leaklens-finding').getBoundingClientRect();"
        " return area.top > 40 && area.top < 120 && r.bottom <= window.innerHeight; }",
        timeout=10_000,
    )
    charts = page.locator(".js-plotly-plot")
    assert charts.count() == 3
    assert "combined p = " in charts.nth(1).inner_text()
    page.screenshot(path=str(screenshot_dir / "dataset_inference_1440x900.png"))
    full_page_screenshot(page, str(screenshot_dir / "dataset_inference_full_1440.png"))


def test_tour_step_leaves_the_verdict_in_view_and_present_mode_shows_no_input(app_url, browser_page, screenshot_dir):
    """README tour step 6: keep the ready example (the shipped demo's famous passages against freshly written
    ones) and the default detectors, press Run: the verdict is on screen when the run ends."""
    page = browser_page
    open_page(page, f"{app_url}/Dataset_inference")
    assert exception_texts(page) == []
    assert "64 suspect + 64 validation texts" in page.locator('[data-testid="stMain"]').inner_text()
    page.get_by_role("button", name="Run dataset inference").click()
    wait_for_streamlit(page, timeout_ms=240_000)
    assert exception_texts(page) == []
    assert_verdict_in_viewport(page)
    assert "the famous passages (demo)" in page.locator(".leaklens-finding").first.inner_text()
    page.screenshot(path=str(screenshot_dir / "dataset_inference_tour_1440x900.png"))

    present_view(page, str(screenshot_dir / "dataset_inference_present_1440x900.png"))
