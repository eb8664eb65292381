"""Real-browser test of the Membership benchmark page: a run a person can watch and stop.

The bar moves while texts are scored; Cancel stops the run, the page says how far it got, and running
again scores only the texts left, then brings the verdict banner into view.
"""

from __future__ import annotations

import re

import pytest

from tests.browser.helpers import (
    assert_verdict_in_viewport,
    choose_option,
    exception_texts,
    open_page,
    set_sample_size,
    switch_present,
    visible_inputs,
    wait_for_streamlit,
    wait_until_partly_done,
)

pytestmark = pytest.mark.browser
N_TEXTS = 64  # of WikiMIA's 250, with every standard method: long enough on the tiny model to stop midway


def test_cancel_stops_the_run_says_how_far_it_got_and_run_again_resumes(app_url, browser_page, screenshot_dir):
    page = browser_page
    open_page(page, f"{app_url}/Membership_benchmark")
    assert exception_texts(page) == []
    set_sample_size(page, N_TEXTS)

    page.get_by_role("button", name="Run benchmark").click()
    # The bar moves per small batch: wait until some texts are done, then cancel midway.
    seen = wait_until_partly_done(page, N_TEXTS)
    assert f"Scoring {N_TEXTS} texts with tiny-random" in page.locator('[data-testid="stProgress"]').first.inner_text()
    assert 0 < seen < N_TEXTS, seen
    page.get_by_role("button", name="Cancel").click()
    wait_for_streamlit(page, timeout_ms=120_000)

    assert exception_texts(page) == []
    note = page.locator(".st-key-cancelled_mb").inner_text()
    match = re.search(rf"Cancelled after (\d+) of {N_TEXTS} texts; run again to continue where it stopped\.", note)
    assert match, note
    stopped_at = int(match.group(1))
    assert seen <= stopped_at < N_TEXTS
    assert page.get_by_role("button", name="Cancel").count() == 0
    assert page.locator(".leaklens-finding").count() == 0  # no verdict for a run that did not finish
    page.screenshot(path=str(screenshot_dir / "membership_cancelled_1440x900.png"))

    page.get_by_role("button", name="Run benchmark").click()
    wait_for_streamlit(page, timeout_ms=240_000)
    page.wait_for_selector(".leaklens-finding", timeout=60_000)
    assert exception_texts(page) == []
    assert page.locator(".st-key-cancelled_mb").count() == 0
    body = page.locator('[data-testid="stMain"]').inner_text()
    assert f"{N_TEXTS - stopped_at} texts scored" in body  # only the texts left
    # The result area (its title, then the verdict) was scrolled into view just below Streamlit's header once the
    # run ended, the whole verdict on screen.
    page.wait_for_function(
        "() => { const area = document.querySelector('.st-key-result_area').getBoundingClientRect();"
        " const r = document.querySelector('.leaklens-finding').getBoundingClientRect();"
        " return area.top > 40 && area.top < 120 && r.bottom <= window.innerHeight; }",
        timeout=10_000,
    )
    page.screenshot(path=str(screenshot_dir / "membership_resumed_1440x900.png"))


def test_tour_step_leaves_the_verdict_in_view_and_present_mode_shows_no_input(app_url, browser_page, screenshot_dir):
    """README tour step 2 on the shipped demo: the verdict is on screen when the run ends (result first), and the
    same page in Present mode shows the verdict with no input widget."""
    page = browser_page
    open_page(page, f"{app_url}/Membership_benchmark")
    choose_option(page, "Dataset: ready example", "Famous vs fresh passages (demo)")
    page.get_by_role("button", name="Run benchmark").click()
    wait_for_streamlit(page, timeout_ms=300_000)
    assert exception_texts(page) == []
    assert_verdict_in_viewport(page)
    page.screenshot(path=str(screenshot_dir / "membership_tour_1440x900.png"))

    switch_present(page, on=True)  # the switch, with the result on the page
    assert "present=1" in page.url
    assert_verdict_in_viewport(page)
    assert visible_inputs(page) == []
    page.screenshot(path=str(screenshot_dir / "membership_present_1440x900.png"))

    open_page(page, f"{app_url}/Membership_benchmark?present=1")  # a shared link opens the same way
    assert visible_inputs(page) == []
    switch_present(page, on=False)
    assert "present" not in page.url
    assert "Run benchmark" in visible_inputs(page)
