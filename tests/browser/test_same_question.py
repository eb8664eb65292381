"""Real-browser test of one question asked twice: the Results page opens the newer run's verdict first and sets
the other run beside it, with the reasons their answers may differ, on the first screens a person sees."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.data.labelled import load_labelled_dataset
from core.engine.handle import resolve_model
from core.membership.benchmark import run_membership_benchmark
from core.methods import parse_methods
from core.store.results import ResultStore
from tests.browser.helpers import assert_verdict_in_viewport, exception_texts, open_page, switch_present
from tests.browser.server import streamlit_server

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def asked_twice_url(tmp_path_factory, tiny_lm) -> Iterator[str]:
    """The shipped demo asked twice of the tiny model: 8 texts with one detector, then 16 with three."""
    store_path = tmp_path_factory.mktemp("browser_same_question") / "results.sqlite"
    for limit, methods in ((8, ["loss"]), (16, ["loss", "zlib", "min_k:k=20"])):
        run_membership_benchmark(
            load_labelled_dataset("demo:famous-vs-fresh", limit=limit),
            resolve_model("tiny-random", loader=lambda spec: tiny_lm),
            parse_methods(methods),
            store=ResultStore(store_path),
        )
    with streamlit_server(tmp_path_factory.mktemp("browser_same_question_log"), LEAKLENS_STORE=str(store_path)) as url:
        yield url


def test_the_other_run_of_the_question_sits_beside_the_verdict_with_why_they_differ(
    asked_twice_url, browser_page, screenshot_dir
):
    page = browser_page
    for width, height in ((1440, 900), (1280, 720)):
        page.set_viewport_size({"width": width, "height": height})
        open_page(page, f"{asked_twice_url}/Results")
        assert exception_texts(page) == []
        assert_verdict_in_viewport(page)
        panel = page.locator("[data-testid='stExpander']").filter(has_text="This question was run 2 times").first
        panel.scroll_into_view_if_needed()
        if panel.locator("details").get_attribute("open") is None:  # the same level: folded, one click away
            panel.locator("summary").click()
            page.wait_for_timeout(500)
        text = panel.inner_text()
        assert panel.locator(".leaklens-card").count() == 2, text
        assert "Data: 16 rows in this run, 8 in the other" in text
        assert "Detectors: 3 in this run, 1 in the other" in text
        page.screenshot(path=str(screenshot_dir / f"results_same_question_{width}x{height}.png"))
    switch_present(page, on=True)
    assert page.locator("[data-testid='stExpander']").filter(has_text="This question was run 2 times").count() == 1
