"""Each kind of report file opened offline in headless Chromium: charts draw, the verdict is on the first screen.

Screenshots ``report_<kind>_1440x900.png`` (the first screen a reader sees) go to ``test-output/screenshots``.
"""

from __future__ import annotations

import pytest

from tests.test_report_kinds import build_leakage_report, build_overlap_outcome, build_passage_report

pytestmark = pytest.mark.browser


def _open_offline(page, path) -> list[str]:
    """Open a report file with every network request refused; returns the page's errors."""
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort())
    page.goto(path.as_uri())
    page.wait_for_function("() => document.querySelectorAll('.plotly-graph-div .main-svg').length > 0")
    return errors


@pytest.fixture()
def report_files(tiny_lm, tmp_path):
    from core.viz.report import overlap_report

    files = {
        "passage": build_passage_report(tiny_lm, tmp_path)[0],
        "delta": build_leakage_report(tiny_lm)[0],
        "overlap": overlap_report(build_overlap_outcome(tmp_path)),
    }
    paths = {}
    for kind, html in files.items():
        paths[kind] = tmp_path / f"report_{kind}.html"
        paths[kind].write_text(html, encoding="utf-8")
    return paths


def test_each_report_file_opens_offline_with_its_verdict_first(browser_page, report_files, screenshot_dir):
    page = browser_page
    for kind, path in report_files.items():
        errors = _open_offline(page, path)
        assert not errors, (kind, errors)
        n_divs = page.locator(".plotly-graph-div").count()
        assert page.locator(".plotly-graph-div .main-svg").count() >= n_divs > 0, kind  # every chart drew
        banner = page.locator(".leaklens-finding").first
        box = banner.bounding_box()
        assert box is not None and box["y"] + box["height"] <= 900, kind  # the verdict is on the first screen
        assert page.locator(".leaklens-headline").first.inner_text().strip(), kind
        page.screenshot(path=str(screenshot_dir / f"report_{kind}_1440x900.png"))
