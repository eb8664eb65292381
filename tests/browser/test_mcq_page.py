"""Real-browser test of the MCQ memorisation page: a run on the tiny model draws the score
distribution, the order-rank histogram and the highlighted side-by-side view; the README tour step ends with
the verdict in view, and Present mode shows it with no input."""

from __future__ import annotations

import re

import pytest

from tests.browser.helpers import (
    assert_verdict_in_viewport,
    choose_option,
    exception_texts,
    full_page_screenshot,
    open_page,
    present_view,
    wait_for_charts,
    wait_for_streamlit,
    wait_until_partly_done,
)

pytestmark = pytest.mark.browser
N_QUESTIONS = 4


def test_mcq_page_runs_and_shows_charts_and_probe_table(app_url, browser_page, screenshot_dir):
    page = browser_page
    open_page(page, f"{app_url}/MCQ_memorisation")
    assert exception_texts(page) == []
    size = page.get_by_label("Sample size (questions)", exact=True)
    size.fill(str(N_QUESTIONS))
    page.get_by_text("Option-order test (24 orders per question)").click()
    page.get_by_role("button", name="Run").click()
    wait_for_streamlit(page, timeout_ms=240_000)
    # Both charts drawn (each has several svg layers, so count the charts themselves): the page draws its result
    # again after the run (Setup folds), and on a busy machine the second chart can lag the first.
    wait_for_charts(page, 2, timeout_ms=60_000)

    assert exception_texts(page) == []
    charts = page.locator(".js-plotly-plot")
    assert charts.count() == 2
    # Score distribution: original and shuffled bars, one per score 0..4.
    assert charts.nth(0).locator(".barlayer .trace").count() == 2
    assert charts.nth(0).locator(".barlayer .point").count() == 10
    assert "Rank of the original option order among 24 orders" in charts.nth(1).inner_text()
    body = page.locator('[data-testid="stMain"]').inner_text()
    assert "Summary (model × benchmark)" in body
    assert "Per-question view" in body
    table = page.locator("table.mcq-probe")
    assert table.count() == 1
    assert table.locator("tr").count() == 5  # header + one row per option
    assert "Ground truth" in table.inner_text()
    page.screenshot(path=str(screenshot_dir / "mcq_1440x900.png"))
    full_page_screenshot(page, str(screenshot_dir / "mcq_full_1440.png"))


def test_tour_step_leaves_the_verdict_in_view_and_present_mode_shows_no_input(app_url, browser_page, screenshot_dir):
    """README tour step 4: the shipped demo questions, Run. The verdict is on screen when the run ends, and
    Present mode shows it with no input widget."""
    page = browser_page
    open_page(page, f"{app_url}/MCQ_memorisation")
    choose_option(page, "Benchmark: ready example", "General-knowledge questions (demo)")
    page.get_by_role("button", name="Run").click()
    wait_for_streamlit(page, timeout_ms=300_000)
    assert exception_texts(page) == []
    assert_verdict_in_viewport(page)
    heading = page.locator('[data-testid="stMain"] h3').first.inner_text()
    assert heading.startswith("General-knowledge questions (demo) · tiny-random")
    page.screenshot(path=str(screenshot_dir / "mcq_tour_1440x900.png"))

    present_view(page, str(screenshot_dir / "mcq_present_1440x900.png"))


def test_enter_in_sample_size_commits_the_value_without_starting_a_run(app_url, browser_page):
    page = browser_page
    open_page(page, f"{app_url}/MCQ_memorisation")
    size = page.get_by_label("Sample size (questions)", exact=True)
    size.fill("500")
    size.press("Enter")
    wait_for_streamlit(page)
    assert exception_texts(page) == []
    assert size.input_value() == "500"  # committed
    body = page.locator('[data-testid="stMain"]').inner_text()
    assert "Probing" not in body
    assert "questions measured" not in body
    assert "Read from the store" not in body
    assert page.locator('[data-testid="stProgress"], .js-plotly-plot').count() == 0
    assert page.get_by_role("button", name="Run").is_enabled()


def test_cancel_stops_probing_and_running_again_measures_only_the_rest(app_url, browser_page, screenshot_dir):
    total = 60
    page = browser_page
    open_page(page, f"{app_url}/MCQ_memorisation")
    choose_option(page, "Benchmark: ready example", "MMLU questions (demo)")  # more questions than the default's 24
    size = page.get_by_label("Sample size (questions)", exact=True)
    size.fill(str(total))
    size.press("Enter")
    wait_for_streamlit(page)
    page.get_by_label("Shuffle seed", exact=True).fill("7")  # a run of its own, not one another test stored
    page.get_by_label("Shuffle seed", exact=True).press("Enter")
    wait_for_streamlit(page)
    page.get_by_role("button", name="Run").click()
    seen = wait_until_partly_done(page, total)
    assert 0 < seen < total, seen
    page.get_by_role("button", name="Cancel").click()
    wait_for_streamlit(page, timeout_ms=120_000)

    assert exception_texts(page) == []
    note = page.locator(".st-key-cancelled_mcq").inner_text()
    match = re.search(rf"Cancelled after (\d+) of {total} questions; run again to continue where it stopped\.", note)
    assert match, note
    stopped_at = int(match.group(1))
    assert seen <= stopped_at < total
    assert page.locator(".leaklens-finding").count() == 0
    page.screenshot(path=str(screenshot_dir / "mcq_cancelled_1440x900.png"))

    page.get_by_role("button", name="Run").click()
    wait_for_streamlit(page, timeout_ms=240_000)
    page.wait_for_selector(".leaklens-finding", timeout=60_000)
    assert exception_texts(page) == []
    assert page.locator(".st-key-cancelled_mcq").count() == 0
    body = page.locator('[data-testid="stMain"]').inner_text()
    measured = re.search(r"(\d+) questions measured and stored", body)
    assert measured, body[1000:3000]
    assert int(measured.group(1)) == total - stopped_at, body[1000:3000]  # only the questions left
