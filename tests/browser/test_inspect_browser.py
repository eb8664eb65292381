"""Real-browser test of the Inspect page: Gettysburg example end to end, escaping, and response time."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from playwright.sync_api import Error as PlaywrightError

from core.data.examples import FRESH, GETTYSBURG
from core.engine.bundled import bundled_tokenizer
from core.methods import default_methods
from tests.browser.helpers import (
    assert_verdict_in_viewport,
    exception_texts,
    full_page_screenshot,
    open_page,
    present_view,
    wait_for_streamlit,
)

pytestmark = pytest.mark.browser

CURVE = '.st-key-inspect_curve [data-testid="stPlotlyChart"]'
"""The confidence curve's chart (the strip placing the passage among fresh passages is a chart too)."""
CHART = f"{CURVE} .js-plotly-plot .main-svg"
HEATMAP = ".ll-heatmap"
SCORE_CARDS = '[class*="st-key-score_card_"]'
TIMING_LOG = Path("test-output") / "timings.jsonl"


def _analyse(page) -> float:
    """Press Analyse and return the seconds until the confidence chart is drawn."""
    start = time.perf_counter()
    page.get_by_role("button", name="Analyse").click()
    page.wait_for_selector(CHART, state="visible", timeout=120_000)
    elapsed = time.perf_counter() - start
    wait_for_streamlit(page)
    return elapsed


_LEGEND_JS = (
    "() => [...document.querySelectorAll('.st-key-inspect_curve [data-testid=\"stPlotlyChart\"] .legendtext')]"
    ".map(e => e.textContent)"
)


def _reanalyse(page) -> float:
    """Press Analyse on a page that already shows a chart; seconds until the chart shows the new curve.

    The legend carries the fitted slope, so a new passage changes its text once the new chart is drawn.
    """
    before = page.evaluate(_LEGEND_JS)
    assert before, "no chart on the page yet"
    start = time.perf_counter()
    page.get_by_role("button", name="Analyse").click()
    page.wait_for_function(
        f"before => {{ const now = ({_LEGEND_JS})(); "
        "return now.length > 0 && JSON.stringify(now) !== JSON.stringify(before); }",
        arg=before,
        timeout=120_000,
    )
    elapsed = time.perf_counter() - start
    wait_for_streamlit(page)
    return elapsed


def _open_setup(page) -> None:
    """Unfold Setup (it folds under the result once a run ends) so the inputs can be used again. Read from the
    fold itself once the page has settled: a text box not drawn yet is no sign of a folded Setup, and clicking
    then would fold it."""
    wait_for_streamlit(page)
    fold = page.locator(".st-key-setup details").first
    if fold.count() and fold.get_attribute("open") is None:
        page.locator(".st-key-setup summary").first.click()
        wait_for_streamlit(page)
    page.get_by_label("Passage", exact=True).wait_for(state="visible", timeout=60_000)


def _type_passage(page, text: str) -> None:
    _open_setup(page)
    box = page.get_by_label("Passage", exact=True)
    box.fill(text)
    box.press("Control+Enter")  # commits the text area (Streamlit sends widget values on blur / Ctrl+Enter)
    wait_for_streamlit(page)


def _log_timing(name: str, seconds: float, **extra: object) -> None:
    TIMING_LOG.parent.mkdir(parents=True, exist_ok=True)
    with TIMING_LOG.open("a") as handle:
        handle.write(json.dumps({"test": name, "seconds": round(seconds, 3), **extra}) + "\n")
    print(f"[timing] {name}: {seconds:.3f} s {extra}")


def test_gettysburg_example_shows_curve_heatmap_and_scores(app_url, browser_page, screenshot_dir):
    page = browser_page
    open_page(page, f"{app_url}/Inspect_a_passage")
    page.get_by_role("button", name="Example: Gettysburg Address (famous)").click()
    wait_for_streamlit(page)
    assert page.get_by_label("Passage", exact=True).input_value() == GETTYSBURG.text
    seconds = _analyse(page)
    _log_timing("inspect_first_analyse_incl_model_and_references", seconds, model="tiny-random")

    assert exception_texts(page) == []
    # The curve and its dashed fitted slope line.
    assert page.locator(f"{CURVE} .scatterlayer .trace").count() == 2
    assert page.locator(f'{CURVE} .scatterlayer path.js-line[style*="dasharray"]').count() == 1
    heatmap = page.locator(HEATMAP)
    assert heatmap.count() == 1
    assert heatmap.inner_text().startswith("Four score and seven years ago")
    assert page.locator(".ll-heatmap .ll-tok").count() == 116
    assert page.locator(".ll-colourbar").count() == 1
    # Hovering a token shows the page's own card at once (not the browser's late native title).
    token = page.locator(".ll-heatmap .ll-tok").nth(1)
    token.hover()
    card = token.evaluate("el => getComputedStyle(el, '::after').content")
    assert card.startswith('"“') and "probability" in card and "rank" in card, card
    assert token.get_attribute("title") is None
    page.screenshot(path=str(screenshot_dir / "inspect_token_hover_card.png"))
    page.mouse.move(5, 5)
    for key in ("loss", "zlib", "min_k_20", "min_k_pp_20", "slope"):
        assert page.locator(f".st-key-score_card_Passage_{key}").is_visible()
    page.get_by_text("more probability-slope variants").click()
    wait_for_streamlit(page)
    assert page.locator(SCORE_CARDS).count() == len(default_methods())
    assert page.locator(".st-key-score_card_Passage_slope_6gram_mean").is_visible()
    assert "Log-likelihood" in page.locator('[data-testid="stMain"]').inner_text()
    # One verdict, the banner's: the scores section never says there is none (issue 26).
    assert page.locator(".leaklens-finding").count() == 1
    assert "No verdict" not in page.locator('[data-testid="stMain"]').inner_text()
    full_page_screenshot(page, str(screenshot_dir / "inspect_gettysburg_1440x900.png"))
    page.locator(CURVE).scroll_into_view_if_needed()
    page.screenshot(path=str(screenshot_dir / "inspect_gettysburg_1440x900_viewport.png"))
    page.set_viewport_size({"width": 1024, "height": 768})
    page.wait_for_timeout(800)
    full_page_screenshot(page, str(screenshot_dir / "inspect_gettysburg_1024x768.png"))


def test_analyse_128_tokens_response_time_and_html_escaping(app_url, browser_page, screenshot_dir):
    page = browser_page
    tokenizer = bundled_tokenizer()
    extended = GETTYSBURG.text + (
        " But, in a larger sense, we can not dedicate, we can not consecrate, we can not hallow"
    )
    ids = tokenizer(extended, add_special_tokens=False)["input_ids"][:128]
    passage = tokenizer.decode(ids)
    n_tokens = len(tokenizer(passage, add_special_tokens=False)["input_ids"])

    # Warm up: the model and the reference examples load once per server process.
    open_page(page, f"{app_url}/Inspect_a_passage")
    _type_passage(page, "A short warm-up passage so the model is loaded before timing.")
    _analyse(page)

    open_page(page, f"{app_url}/Inspect_a_passage")  # a new session: no result on screen yet
    _type_passage(page, passage)
    seconds = _analyse(page)
    _log_timing("inspect_analyse_to_chart_new_session", seconds, model="tiny-random", tokens=n_tokens)
    # The page draws the passage's own result, then reruns twice (verdict, k-gram pass): on a busy machine the
    # idle moment between two runs can pass for the end, so wait for the heatmap the last run leaves.
    page.wait_for_function(
        "n => document.querySelectorAll('.ll-heatmap .ll-tok').length === n", arg=n_tokens, timeout=60_000
    )
    assert page.locator(".ll-heatmap .ll-tok").count() == n_tokens

    # Same session, charting library already loaded: the case a user meets on every further passage.
    other = tokenizer.decode(tokenizer(FRESH.text + " " + FRESH.text, add_special_tokens=False)["input_ids"][:128])
    _type_passage(page, other)
    seconds = _reanalyse(page)
    _log_timing(
        "inspect_analyse_to_chart",
        seconds,
        model="tiny-random",
        tokens=len(tokenizer(other, add_special_tokens=False)["input_ids"]),
    )
    assert page.locator(".ll-heatmap").inner_text().startswith(FRESH.text[:40])

    hostile = (
        "Hello <script>window.__leaklens_pwned = 1</script> and <b>not bold</b> & "
        '<img src=x onerror="window.__leaklens_pwned=2">'
    )
    # As a user would: type, then press Analyse straight away (the click itself commits the text).
    _open_setup(page)
    page.get_by_label("Passage", exact=True).fill(hostile)
    _reanalyse(page)
    assert exception_texts(page) == []
    shown = page.locator(HEATMAP).inner_text()
    assert "<script>window.__leaklens_pwned = 1</script>" in shown
    assert "<b>not bold</b>" in shown
    assert page.locator(".ll-heatmap b, .ll-heatmap script, .ll-heatmap img").count() == 0
    assert page.evaluate("window.__leaklens_pwned === undefined")
    _element_screenshot(page, HEATMAP, screenshot_dir / "inspect_html_escaped.png")


def _element_screenshot(page, selector: str, path: Path, attempts: int = 3) -> None:
    """Screenshot one element; Streamlit may swap the element for an identical one just after a run."""
    for attempt in range(attempts):
        try:
            page.locator(selector).screenshot(path=str(path))
            return
        except PlaywrightError:
            if attempt == attempts - 1:
                raise
            wait_for_streamlit(page)


STALE_ALERT = '[data-testid="stAlert"]:has-text("Out of date")'
RESULT_BLOCK = ".st-key-result_inspect_result"
_OPACITY_JS = "sel => Number(getComputedStyle(document.querySelector(sel)).opacity)"


def test_another_passage_marks_the_old_summary_out_of_date(app_url, browser_page, screenshot_dir):
    page = browser_page
    open_page(page, f"{app_url}/Inspect_a_passage")
    page.get_by_role("button", name="Example: fresh paragraph (unseen)").click()
    wait_for_streamlit(page)
    _analyse(page)
    assert page.locator(STALE_ALERT).count() == 0
    assert page.evaluate(_OPACITY_JS, RESULT_BLOCK) == 1
    fresh_start = " ".join(FRESH.text.split()[:4])
    assert fresh_start in page.locator(RESULT_BLOCK).get_by_text("Computed for").inner_text()

    # A new passage without pressing Analyse: the old summary must not read as this passage's.
    _open_setup(page)
    page.get_by_role("button", name="Example: Gettysburg Address (famous)").click()
    wait_for_streamlit(page)
    assert exception_texts(page) == []
    alert = page.locator(STALE_ALERT)
    assert alert.count() == 1
    assert alert.is_visible()
    text = alert.inner_text()
    assert "The passage changed since they were computed" in text
    assert "press Analyse to update them" in text
    assert fresh_start in text
    assert "Four score and seven" in text  # old → new, as the reader knows them
    summary = page.locator('[class*="st-key-summary_"]').first
    # The warning comes first (in the page: Setup, where the click was, is now below the result, so the
    # summary may be scrolled above the viewport while the sticky warning stays in view).
    assert alert.evaluate(
        "(a, sel) => !!(a.compareDocumentPosition(document.querySelector(sel)) & Node.DOCUMENT_POSITION_FOLLOWING)",
        '[class*="st-key-summary_"]',
    )
    page.wait_for_function(f"() => ({_OPACITY_JS})({json.dumps(RESULT_BLOCK)}) < 0.6")  # dimmed
    assert page.locator(HEATMAP).inner_text().startswith(FRESH.text[:30])  # the old text, under the warning
    page.mouse.move(5, 5)  # no button tooltip over the picture
    page.locator(STALE_ALERT).evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(300)
    page.screenshot(path=str(screenshot_dir / "inspect_stale_1440x900.png"))
    # Scrolled down to the old summary, the warning is still in view above it (it sticks to the top).
    summary.evaluate("e => e.scrollIntoView({block: 'center'})")
    page.wait_for_timeout(300)
    alert_box, summary_box = alert.bounding_box(), summary.bounding_box()
    assert 0 <= alert_box["y"]
    assert alert_box["y"] + alert_box["height"] <= summary_box["y"]
    page.screenshot(path=str(screenshot_dir / "inspect_stale_summary_1440x900.png"))
    full_page_screenshot(page, str(screenshot_dir / "inspect_stale_full_1440.png"))

    _reanalyse(page)
    assert page.locator(STALE_ALERT).count() == 0
    assert page.evaluate(_OPACITY_JS, RESULT_BLOCK) == 1
    assert page.locator(HEATMAP).inner_text().startswith("Four score and seven years ago")
    assert "Four score and seven" in page.locator(RESULT_BLOCK).get_by_text("Computed for").inner_text()


TOUR_SIZES = ({"width": 1440, "height": 900}, {"width": 1280, "height": 720})


def test_tour_step_leaves_the_verdict_in_view_and_present_mode_shows_no_input(app_url, browser_page, screenshot_dir):
    """README tour step 1 (the Gettysburg example, then Analyse), each size in a new session: when both passes
    have run, Setup is folded and the verdict banner is fully on screen; Present mode shows it with no input.
    The second size reads the model and the fresh passages' scores back."""
    page = browser_page
    for size in TOUR_SIZES:
        tag = f"{size['width']}x{size['height']}"
        page.set_viewport_size(size)
        open_page(page, f"{app_url}/Inspect_a_passage")
        page.get_by_role("button", name="Example: Gettysburg Address (famous)").click()
        wait_for_streamlit(page)
        start = time.perf_counter()
        page.get_by_role("button", name="Analyse").click()
        wait_for_streamlit(page, timeout_ms=300_000)
        _log_timing(f"inspect_tour_step_{tag}", time.perf_counter() - start, model="tiny-random")
        assert exception_texts(page) == []
        assert_verdict_in_viewport(page)
        assert page.locator(".leaklens-finding").count() == 1
        assert not page.get_by_label("Passage", exact=True).is_visible()  # Setup folded under the result
        strip = '.st-key-placement_Passage [data-testid="stPlotlyChart"]'
        assert page.locator(strip).is_visible()
        # The comparison chart is in the first viewport too, and names the fresh text nearest in kind.
        assert_verdict_in_viewport(page, strip, "comparison chart")
        assert "nearest in kind" in (page.locator(f"{strip} .gtitle").text_content() or "")
        assert page.get_by_text("The model wrote", exact=True).first.is_visible()  # the extraction panel
        page.mouse.move(5, 5)  # no button tooltip over the picture
        page.screenshot(path=str(screenshot_dir / f"inspect_tour_{tag}.png"))

        present_view(page, str(screenshot_dir / f"inspect_present_{tag}.png"))


def test_a_model_without_shipped_scores_shows_the_curve_first_and_the_verdict_before_the_whole_fresh_set(
    tmp_path, browser_page, screenshot_dir
):
    """Progressive calibration on a fresh store (the tiny model's fresh scores never ship): the passage's curve
    is on screen while the fresh passages are scored, and the verdict appears once those of its length are,
    while the rest of the set is still unscored (counted in the store at that moment)."""
    from core.passage.calibration import FRESH_KIND, load_fresh_passages
    from core.store.results import ResultStore
    from tests.browser.server import streamlit_server

    store_path = tmp_path / "results.sqlite"
    with streamlit_server(tmp_path, LEAKLENS_STORE=str(store_path)) as url:
        page = browser_page
        open_page(page, f"{url}/Inspect_a_passage")
        # The Address's first sentence (about 35 tokens), the length of a one-sentence paste: it is compared with
        # short fresh passages, so the set's part it needs is scored in seconds on this machine.
        _type_passage(page, GETTYSBURG.text.split(". ")[0] + ".")
        page.get_by_role("button", name="Analyse").click()
        page.wait_for_selector(CHART, state="visible", timeout=120_000)
        pending = page.locator(".st-key-inspect_verdict_pending")
        assert pending.is_visible(), "the curve came without the comparison under way"
        assert page.locator(".leaklens-finding").count() == 0  # the curve first, the verdict later
        assert "Comparing with freshly written passages of similar length" in pending.inner_text()
        page.screenshot(path=str(screenshot_dir / "inspect_progressive_curve_first_1440x900.png"))
        page.wait_for_selector(".leaklens-finding", state="visible", timeout=300_000)
        (run,) = ResultStore(store_path).list_runs(FRESH_KIND)
        n_set = len(load_fresh_passages())
        assert 15 <= run.n_done < n_set, (run.n_done, n_set)
        assert not run.finished
        wait_for_streamlit(page, timeout_ms=300_000)
        assert exception_texts(page) == []
        assert_verdict_in_viewport(page)
        assert page.locator(CURVE).count() == 1
        page.screenshot(path=str(screenshot_dir / "inspect_progressive_verdict_1440x900.png"))
        assert ResultStore(store_path).list_runs(FRESH_KIND)[0].n_done == run.n_done  # nothing more was scored
