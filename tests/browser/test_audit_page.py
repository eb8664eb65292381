"""Real-browser test of the Audit page: the shipped demo benchmark with the tiny model, at 1440×900 and 1280×720.
When the audit ends, the combined verdict and the evidence table are inside the viewport the user is left at; in
Present mode no input is shown. The screenshots are saved for a person to look at."""

from __future__ import annotations

import pytest

from tests.browser.helpers import (
    assert_verdict_in_viewport,
    exception_texts,
    open_page,
    present_view,
    wait_for_charts,
    wait_for_streamlit,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SIZES = ({"width": 1440, "height": 900}, {"width": 1280, "height": 720})
TABLE = "table.ll-evidence"


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s['width']}x{s['height']}")
def test_the_verdict_and_the_evidence_table_are_in_view_when_the_audit_ends(
    app_url, browser_page, screenshot_dir, size
):
    page = browser_page
    page.set_viewport_size(size)
    name = f"{size['width']}x{size['height']}"
    open_page(page, f"{app_url}/Audit_a_model")
    assert exception_texts(page) == []
    setup = page.locator(".st-key-setup").inner_text()
    assert "The plan: 4 tests" in setup  # order, multiple choice, option order, extraction
    assert "Not run · Loss delta: needs solutions and a reference set" in setup
    page.get_by_role("button", name="Run audit").click()
    wait_for_streamlit(page, timeout_ms=600_000)
    assert exception_texts(page) == []
    wait_for_charts(page, 1, timeout_ms=60_000)
    page.screenshot(path=str(screenshot_dir / f"audit_page_{name}.png"))
    box = assert_verdict_in_viewport(page)
    table = page.locator(TABLE).first.bounding_box()
    assert table is not None, "no evidence table on the page"
    assert 0 <= table["y"] and table["y"] + table["height"] <= box["height"], (
        f"the evidence table runs past the viewport: {table}, viewport height {box['height']}"
    )
    rows = page.locator(f"{TABLE} tbody tr")
    assert rows.count() == 4
    assert page.locator(f"{TABLE} abbr.leaklens-term").count() > 0  # the key numbers' terms glossed on hover
    present_view(page, str(screenshot_dir / f"audit_page_present_{name}.png"))
