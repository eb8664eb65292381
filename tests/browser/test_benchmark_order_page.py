"""Real-browser test of the Benchmark order test page on ground truth: the tiny model fine-tuned on one benchmark
file in its published order is tested on that file (evidence that it saw it) and on a file of the same kind it
never saw (no sign, or too rough to tell). The page shows the verdict ``core`` reaches for the same inputs; at
1440×900 and at 1280×720 it is in view when each run ends, and the screenshots are saved for a person to look at."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.stats.finding import Finding
from core.viz.banner import LEVEL_STYLE
from tests.browser.helpers import (
    assert_verdict_in_viewport,
    choose_option,
    exception_texts,
    open_page,
    present_view,
    wait_for_charts,
    wait_for_streamlit,
)
from tests.helpers.order_benchmark import SHARDS, TEMPLATE

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SIDEBAR = '[data-testid="stSidebar"]'
SIZES = ({"width": 1440, "height": 900}, {"width": 1280, "height": 720})


@pytest.fixture(scope="module")
def expected(order_tuned_runs) -> dict[Path, Finding]:
    """The finding ``core`` reaches on each benchmark with the tuned model and the page's settings, stored in the
    page's own store: the page, asked the same, finds that run by its key and shows it (the page's own scoring
    is tested in tests/ui/test_benchmark_order_page.py)."""
    return {path: run.finding for path, run in order_tuned_runs.items()}


def _fill(page, label: str, value: str) -> None:
    field = page.get_by_label(label, exact=True)
    field.fill(value)
    field.press("Enter")
    wait_for_streamlit(page)


def _run(page, benchmark: Path, screenshot: Path) -> str:
    """Test ``benchmark`` with the template and shards of the ground truth, save the screen as the run leaves it;
    the verdict banner's text."""
    setup = page.locator(".st-key-setup")
    if not setup.get_by_label("Benchmark: file path", exact=True).is_visible():
        setup.locator("summary").first.click()  # folded under the last result
        wait_for_streamlit(page)
    _fill(page, "Benchmark: file path", str(benchmark))
    _fill(page, "Text template: how one example reads", TEMPLATE)
    _fill(page, "Shards", str(SHARDS))
    assert f"120 examples in {SHARDS} shards of 4 consecutive examples." in setup.inner_text()
    page.get_by_role("button", name="Run order test").click()
    wait_for_streamlit(page, timeout_ms=300_000)
    assert exception_texts(page) == []
    wait_for_charts(page, 1, timeout_ms=60_000)
    assert_verdict_in_viewport(page)
    page.screenshot(path=str(screenshot))
    return page.locator(".leaklens-finding").first.inner_text()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s['width']}x{s['height']}")
def test_the_file_the_model_read_is_found_and_one_it_never_saw_is_not(
    expected, app_url, browser_page, screenshot_dir, order_tuned_model, order_benchmarks, size
):
    page = browser_page
    page.set_viewport_size(size)
    name = f"{size['width']}x{size['height']}"
    open_page(page, f"{app_url}/Benchmark_order")
    assert exception_texts(page) == []
    choose_option(page, "Model", "Other (hub id or local folder)…")
    model_field = page.locator(SIDEBAR).get_by_role("textbox", name="Hub id or local directory")
    model_field.fill(str(order_tuned_model))
    model_field.press("Enter")
    wait_for_streamlit(page)
    page.locator('[data-testid="stRadio"]').filter(has_text="Benchmark").first.get_by_text("Local path").click()
    wait_for_streamlit(page)

    seen, unseen = order_benchmarks
    verdict = _run(page, seen, screenshot_dir / f"benchmark_order_seen_{name}.png")
    finding = expected[seen]
    assert finding.level in ("strong", "moderate"), finding  # ground truth: the model read this file in order
    assert verdict.startswith(LEVEL_STYLE[finding.level][0].upper()), verdict
    assert finding.headline in verdict
    assert f"has seen {seen.name}" in verdict
    heading = page.locator('[data-testid="stMain"] h3').first.inner_text()
    assert heading.startswith(f"{seen.name} · {order_tuned_model.name}")

    verdict = _run(page, unseen, screenshot_dir / f"benchmark_order_unseen_{name}.png")
    finding = expected[unseen]
    assert finding.level in ("none", "inconclusive"), finding  # never seen
    assert verdict.startswith(LEVEL_STYLE[finding.level][0].upper()), verdict
    assert finding.headline in verdict

    if size == SIZES[0]:
        present_view(page, str(screenshot_dir / f"benchmark_order_present_{name}.png"))
