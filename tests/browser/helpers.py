"""Helpers shared by the real-browser tests (imported by every page's browser test)."""

from __future__ import annotations

import re
import time

from playwright.sync_api import Page
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.helpers.jargon import jargon_in

APP_SELECTOR = '[data-testid="stApp"]'
IDLE_SELECTOR = '[data-testid="stApp"][data-test-script-state="notRunning"]'
RUNNING_ICON = '[data-testid="stStatusWidgetRunningIcon"], [data-testid="stStatusWidgetRunningManIcon"]'


def _is_idle(page: Page) -> bool:
    return page.locator(IDLE_SELECTOR).count() == 1 and page.locator(RUNNING_ICON).count() == 0


def wait_for_streamlit(page: Page, timeout_ms: float = 120_000, settle_ms: float = 400) -> None:
    """Block until the script run has finished and stayed finished for ``settle_ms``.

    Streamlit reruns asynchronously after a click, so a single check can see the old, idle state;
    requiring the idle state to hold for a short while makes the wait robust without fixed sleeps.
    Raises ``TimeoutError`` (with the script state it saw) when the app keeps running.
    """
    page.wait_for_selector(APP_SELECTOR, state="attached", timeout=timeout_ms)
    deadline = time.monotonic() + timeout_ms / 1000
    idle_since: float | None = None
    while time.monotonic() < deadline:
        if _is_idle(page):
            idle_since = idle_since or time.monotonic()
            if (time.monotonic() - idle_since) * 1000 >= settle_ms:
                return
        else:
            idle_since = None
        page.wait_for_timeout(100)
    state = page.locator(APP_SELECTOR).first.get_attribute("data-test-script-state")
    raise TimeoutError(f"Streamlit app still busy after {timeout_ms / 1000:.0f} s (script state: {state})")


def open_page(page: Page, url: str, timeout_ms: float = 120_000) -> None:
    """Navigate to ``url`` and wait until its first script run is over."""
    page.goto(url, wait_until="domcontentloaded", timeout=timeout_ms)
    wait_for_streamlit(page, timeout_ms=timeout_ms)


_CHARTS_DRAWN_JS = """(atLeast) => {
  const charts = [...document.querySelectorAll('.js-plotly-plot')];
  const drawn = chart => chart.querySelector('.main-svg .trace, .main-svg .hm');  // heatmaps: .hm
  return charts.filter(drawn).length >= atLeast;
}"""


def wait_for_charts(page: Page, at_least: int, timeout_ms: float = 60_000) -> None:
    """Wait until ``at_least`` Plotly charts on the page have drawn their traces.

    Charts are counted, not their svg layers (each chart has several), and only once drawn: on a busy machine
    one chart can lag another by seconds, and a chart's frame appears before its data.
    """
    page.wait_for_function(_CHARTS_DRAWN_JS, arg=at_least, timeout=timeout_ms, polling=100)


def exception_texts(page: Page) -> list[str]:
    """Texts of any Streamlit exception boxes on the page (a test asserts this is empty)."""
    return page.locator('[data-testid="stException"]').all_inner_texts()


_SCROLL_HEIGHT_JS = """() => {
  const heights = [document.documentElement.scrollHeight];
  const candidates = '[data-testid="stMain"], [data-testid="stAppViewContainer"], section, div';
  for (const el of document.querySelectorAll(candidates)) {
    const style = getComputedStyle(el);
    if (['auto', 'scroll'].includes(style.overflowY) && el.scrollHeight > el.clientHeight + 5) {
      heights.push(el.scrollHeight + el.getBoundingClientRect().top);
    }
  }
  return Math.ceil(Math.max(...heights));
}"""


def full_page_screenshot(page: Page, path: str, max_height: int = 12_000) -> None:
    """Screenshot the whole app, not just the viewport.

    Streamlit scrolls inside its own container, so Playwright's ``full_page`` sees only one screen; this
    grows the viewport to the content's height (same width), shoots, and restores the viewport.
    """
    original = page.viewport_size or {"width": 1440, "height": 900}
    height = min(max_height, max(original["height"], int(page.evaluate(_SCROLL_HEIGHT_JS))))
    page.set_viewport_size({"width": original["width"], "height": height})
    try:
        page.wait_for_timeout(500)  # let charts re-layout to the new size
        page.screenshot(path=path)
    finally:
        page.set_viewport_size(original)


def progress_done(page: Page, total: int) -> int:
    """Items done according to the first progress bar's "(done/total ...)" text, 0 when none is shown."""
    bars = page.locator('[data-testid="stProgress"]')
    if bars.count() == 0:
        return 0
    match = re.search(rf"\((\d+)/{total}\b", bars.first.inner_text())
    return int(match.group(1)) if match else 0


def wait_until_partly_done(page: Page, total: int, timeout_ms: float = 120_000) -> int:
    """Wait until the progress bar shows some but not all of ``total`` items done; returns how many."""
    page.wait_for_selector('[data-testid="stProgress"]', timeout=timeout_ms)
    page.wait_for_function(
        f"""() => {{
            const bar = document.querySelector('[data-testid="stProgress"]');
            const m = bar && bar.innerText.match(/\\((\\d+)\\/{total}\\b/);
            return m && Number(m[1]) > 0;
        }}""",
        timeout=timeout_ms,
        polling=100,
    )
    return progress_done(page, total)


VERDICT_SELECTOR = ".leaklens-finding"
INPUT_WIDGETS = ", ".join(
    f'[data-testid="{t}"]'
    for t in (
        "stTextInput",
        "stNumberInput",
        "stSelectbox",
        "stMultiSelect",
        "stRadio",
        "stCheckbox",
        "stButton",
        "stTextArea",
        "stFileUploader",
        "stSlider",
        "stDownloadButton",
        "stDateInput",
        "stColorPicker",
        "stSelectSlider",
        "stToggle",
        "stFormSubmitButton",
        "stBaseButton-secondary",
        "stBaseButton-primary",
    )
)
PRESENT_SWITCH = ".st-key-leaklens_present"


def verdict_box(page: Page, selector: str = VERDICT_SELECTOR) -> dict[str, float] | None:
    """The first verdict banner's (or ``selector``'s) box in the viewport (``top``, ``bottom``) and the viewport's
    height."""
    return page.evaluate(
        "(sel) => { const e = document.querySelector(sel); if (!e) return null;"
        " const r = e.getBoundingClientRect();"
        " return {top: r.top, bottom: r.bottom, left: r.left, right: r.right,"
        " height: window.innerHeight, width: window.innerWidth}; }",
        selector,
    )


def assert_verdict_in_viewport(
    page: Page, selector: str = VERDICT_SELECTOR, what: str = "verdict banner"
) -> dict[str, float]:
    """The verdict banner (or ``selector``) is fully inside the viewport the user is left at (waits for any scroll
    to settle)."""
    page.wait_for_selector(selector, timeout=60_000)
    page.wait_for_timeout(600)
    box = verdict_box(page, selector)
    assert box is not None, f"no {what} on the page"
    inside = box["top"] >= 0 and box["bottom"] <= box["height"] and box["left"] >= 0 and box["right"] <= box["width"]
    assert inside, f"{what} outside the viewport: {box}"
    return box


def visible_inputs(page: Page) -> list[str]:
    """Labels (or test ids) of input widgets a person can see, the Present switch left out."""
    return page.evaluate(
        """([sel, keep]) => Array.from(document.querySelectorAll(sel))
            .filter(e => !e.closest(keep))
            .filter(e => { const r = e.getBoundingClientRect(); const s = getComputedStyle(e);
                           return r.width > 0 && r.height > 0 && s.visibility !== 'hidden'; })
            .map(e => (e.innerText || e.getAttribute('data-testid')).trim().slice(0, 60))""",
        [INPUT_WIDGETS, PRESENT_SWITCH],
    )


def set_sample_size(page: Page, n: int) -> None:
    """Open the Membership page's *Columns and sample* and commit a sample of ``n`` texts (Enter, no run)."""
    page.get_by_text("Columns and sample").click()
    size = page.get_by_label("Sample size (0 = all rows)", exact=True)
    size.fill(str(n))
    size.press("Enter")
    wait_for_streamlit(page)


def choose_option(page: Page, label: str, option: str) -> None:
    """Pick ``option`` in the selectbox whose label holds ``label``.

    On a busy machine a rerun that lands just after the click redraws the box and closes its list before the
    option shows, so the list is opened again (after the page settles) until the option is there."""
    box = page.locator('[data-testid="stSelectbox"]').filter(has_text=label).first
    wanted = page.get_by_role("option", name=option)
    for _ in range(5):
        wait_for_streamlit(page)
        box.click()
        try:
            wanted.wait_for(state="visible", timeout=20_000)
            break
        except PlaywrightTimeoutError:
            page.keyboard.press("Escape")
    wanted.click()
    wait_for_streamlit(page)


def switch_present(page: Page, on: bool, timeout_ms: float = 60_000) -> None:
    """Click the Present switch and wait until the rerun it starts has written the URL and finished.

    The rerun starts asynchronously: on a busy machine the page can still look idle, with the old URL, for
    longer than ``wait_for_streamlit``'s settle time, so the URL's change is what is waited for first.
    """
    page.locator(PRESENT_SWITCH).get_by_text("Present").click()
    wanted = "true" if on else "false"
    page.wait_for_function(f"() => location.search.includes('present=1') === {wanted}", timeout=timeout_ms)
    wait_for_streamlit(page)


def present_view(page: Page, screenshot: str) -> None:
    """Switch Present on and check what an audience sees: the URL says so, the verdict is still in view, no
    input widget is visible and no jargon is on screen, the verdict's chart included; then save the screenshot."""
    switch_present(page, on=True)
    assert "present=1" in page.url
    assert_verdict_in_viewport(page)
    assert visible_inputs(page) == []
    page.screenshot(path=screenshot)
    found = visible_jargon(page, charts=True)
    assert found == [], "\n".join(found)


VISIBLE_TEXT_JS = """(skipCharts) => {
  const main = document.querySelector('[data-testid="stMain"]');
  const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
  const out = [];
  while (walker.nextNode()) {
    const el = walker.currentNode.parentElement;
    if (!el) continue;
    const fold = el.closest('details');
    if (fold && !fold.open && !el.closest('summary')) continue;  // a closed fold's content is not on screen
    if (el.closest('[data-testid="stIconMaterial"]')) continue;  // an icon's ligature name, drawn as a symbol
    if (skipCharts && el.closest(".js-plotly-plot")) continue;
    if (el.closest('h1, h2, h3')) continue;  // the test's name and the run's data and model names
    const r = el.getBoundingClientRect(); const s = getComputedStyle(el);
    if (r.width === 0 || r.height === 0 || s.visibility === 'hidden' || s.display === 'none') continue;
    const text = walker.currentNode.textContent.trim();
    if (text) out.push(text);
  }
  return out.join(' \\n ');
}"""


def visible_text(page: Page, *, charts: bool = True) -> str:
    """Every piece of text a person can see on the page's main area, in order, but its headings (the test's name,
    the data's and the model's names, which are the user's own words); ``charts=False`` leaves the charts' labels
    out."""
    return page.evaluate(VISIBLE_TEXT_JS, not charts)


def visible_jargon(page: Page, *, charts: bool = False) -> list[str]:
    """The jargon terms (``tests.helpers.jargon``) in the text a person can see, each with its context.

    Charts are left out by default: the further charts under Setup's details label their axes with the measure's
    name (a loss, AUROC) for the people who run the test; the verdict's chart, the one Present mode shows, is
    checked with them (``charts=True``)."""
    text = visible_text(page, charts=charts)
    return [f"{term}: …{text[max(0, m.start() - 40) : m.end() + 40]}…" for term, m in jargon_in(text)]
