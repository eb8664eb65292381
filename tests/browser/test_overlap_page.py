"""Real-browser tests of the Overlap search page: search a built index and see the highlighted matches; the README
tour step (build the demo index, search it with the demo test set) leaves each outcome in view."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.overlap.backends import get_backend
from core.overlap.indexing import build_index
from core.overlap.sources import TrainingSource
from tests.browser.helpers import (
    assert_verdict_in_viewport,
    exception_texts,
    full_page_screenshot,
    open_page,
    present_view,
    wait_for_charts,
    wait_for_streamlit,
)
from tests.browser.server import streamlit_server
from tests.overlap.corpus import Corpus, write_corpus

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def overlap_app(tmp_path_factory) -> Iterator[tuple[str, Corpus, Path]]:
    """A server of its own whose cache (and so its embedded indexes) lives in a temporary directory."""
    cache = tmp_path_factory.mktemp("overlap_cache")
    corpus = write_corpus(tmp_path_factory.mktemp("overlap_data"))
    build_index(
        get_backend("embedded", root=cache / "indexes"),
        "mmlu-plain",
        [TrainingSource(str(corpus.plain_path), text_field="text")],
    )
    with streamlit_server(tmp_path_factory.mktemp("overlap_log"), LEAKLENS_CACHE=str(cache)) as url:
        yield url, corpus, cache


def test_search_shows_heatmap_and_highlighted_matches(overlap_app, browser_page, screenshot_dir: Path):
    url, corpus, cache = overlap_app
    page = browser_page
    open_page(page, f"{url}/Overlap_search")
    # The index is listed (the table is a canvas; the delete picker shows the name as text).
    assert page.get_by_label("Index to delete").input_value() == "mmlu-plain"
    page.get_by_role("tab", name="Search").click()
    page.locator('[data-testid="stRadio"]').filter(has_text="Test set").first.get_by_text("Local path").click()
    wait_for_streamlit(page)
    path = page.get_by_label("Test set: file path")
    path.fill(str(corpus.test_path))
    path.press("Enter")  # outside the form: committed on Enter
    wait_for_streamlit(page)
    page.get_by_label("Id field (optional)").fill("id")
    page.get_by_role("button", name="Search").click()
    wait_for_streamlit(page)
    page.locator("mark.ll-match").first.wait_for(state="visible")
    assert exception_texts(page) == []
    marks = page.locator("mark.ll-match")
    # Both texts of every verbatim copy are highlighted (plus the near-copies and the short question).
    assert marks.count() >= 2 * (len(corpus.exact_in_plain) + 1)
    first_pair = page.locator(".ll-pair").first
    assert first_pair.locator("mark").count() >= 2
    # Plotly draws after the page's text has arrived: wait for the chart before counting it.
    wait_for_charts(page, 1, timeout_ms=60_000)
    assert page.locator(".js-plotly-plot").count() == 1
    assert page.get_by_text("contamination_report.tsv").first.is_visible()
    # The files behind the downloads live in the cache, where a size-bounded clean-up finds them.
    (results,) = (cache / "overlap-results").iterdir()
    assert (results / "contamination_report.tsv").is_file()
    page.locator(".ll-pair").first.scroll_into_view_if_needed()
    full_page_screenshot(page, str(screenshot_dir / "overlap_search.png"))


@pytest.fixture(scope="module")
def fresh_overlap_app(tmp_path_factory) -> Iterator[str]:
    """A server with an empty cache: no index yet, as on a fresh clone."""
    cache = tmp_path_factory.mktemp("overlap_fresh_cache")
    with streamlit_server(tmp_path_factory.mktemp("overlap_fresh_log"), LEAKLENS_CACHE=str(cache)) as url:
        yield url


def _in_viewport(page, selector: str) -> dict:
    box = page.evaluate(
        "(sel) => { const e = document.querySelector(sel); if (!e) return null; const r = e.getBoundingClientRect();"
        " return {top: r.top, bottom: r.bottom, height: window.innerHeight}; }",
        selector,
    )
    assert box is not None, (selector, box)
    assert box["top"] >= 0, (selector, box)
    assert box["bottom"] <= box["height"], (selector, box)
    return box


def test_tour_step_leaves_each_outcome_in_view_and_present_mode_shows_no_input(
    fresh_overlap_app, browser_page, screenshot_dir: Path
):
    """README tour step 5 on the shipped demo: the build's outcome, then the search's verdict, are on screen when
    each ends (result first), and Present mode shows the verdict with no input widget."""
    page = browser_page
    open_page(page, f"{fresh_overlap_app}/Overlap_search")
    assert exception_texts(page) == []
    page.get_by_label("Index name").fill("demo")
    page.get_by_role("button", name="Build index").click()
    wait_for_streamlit(page)
    assert exception_texts(page) == []
    page.wait_for_selector(".st-key-overlap_built", timeout=60_000)
    page.wait_for_timeout(600)
    _in_viewport(page, ".st-key-overlap_built")
    assert "Built demo: 60 documents" in page.locator(".st-key-overlap_built").inner_text()
    page.screenshot(path=str(screenshot_dir / "overlap_tour_built_1440x900.png"))

    page.get_by_role("tab", name="Search").click()
    page.get_by_role("button", name="Search", exact=True).click()
    wait_for_streamlit(page)
    assert exception_texts(page) == []
    assert_verdict_in_viewport(page)
    assert page.locator(".st-key-overlap_built").count() == 0  # the verdict is the news now
    assert "share text with the training data" in page.locator(".leaklens-finding").first.inner_text()
    page.screenshot(path=str(screenshot_dir / "overlap_tour_1440x900.png"))

    present_view(page, str(screenshot_dir / "overlap_present_1440x900.png"))
