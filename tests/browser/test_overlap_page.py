"""Real-browser test of the Overlap search page: search a built index, heatmap and highlighted matches."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.overlap.backends import get_backend
from core.overlap.indexing import build_index
from core.overlap.sources import TrainingSource
from tests.browser.helpers import exception_texts, full_page_screenshot, open_page, wait_for_streamlit
from tests.browser.server import streamlit_server
from tests.overlap.corpus import Corpus, write_corpus

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def overlap_app(tmp_path_factory) -> Iterator[tuple[str, Corpus, Path]]:
    """A server of its own whose cache (and so its embedded indexes) lives in a temporary directory."""
    cache = tmp_path_factory.mktemp("overlap_cache")
    corpus = write_corpus(tmp_path_factory.mktemp("overlap_data"))
    build_index(get_backend("embedded", root=cache / "indexes"), "mmlu-plain",
                [TrainingSource(str(corpus.plain_path), text_field="text")])
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
    assert page.locator(".js-plotly-plot").count() == 1
    assert page.get_by_text("contamination_report.tsv").first.is_visible()
    # The files behind the downloads live in the cache, where a size-bounded clean-up finds them.
    (results,) = (cache / "overlap-results").iterdir()
    assert (results / "contamination_report.tsv").is_file()
    page.locator(".ll-pair").first.scroll_into_view_if_needed()
    full_page_screenshot(page, str(screenshot_dir / "overlap_search.png"))
