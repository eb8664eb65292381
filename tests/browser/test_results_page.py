"""Real-browser test of the Results page: stored runs render as a heatmap and a ROC overlay."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.data.labelled import load_labelled_dataset
from core.data.problems import ProblemSet, builtin_problems
from core.leakage.delta import ModelRequest
from core.leakage.run import run_leakage_test
from core.membership.benchmark import run_membership_benchmark
from core.methods import parse_methods
from core.store.results import ResultStore
from tests.browser.helpers import exception_texts, full_page_screenshot, open_page, wait_for_streamlit
from tests.browser.server import streamlit_server

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / ".." / "shared" / "data"


@pytest.fixture(scope="module")
def results_app_url(tmp_path_factory, tiny_lm) -> Iterator[str]:
    """A server of its own whose results store holds two finished runs (the shared server uses the user's)."""
    store_path = tmp_path_factory.mktemp("browser_results") / "results.sqlite"
    store = ResultStore(store_path)
    methods = parse_methods(["loss", "zlib", "min_k:k=20", "min_k_pp:k=20"])
    for name in ("wikimia_length128.parquet", "booktection_sample.csv"):
        dataset = load_labelled_dataset(str(DATA / name), limit=24)
        run_membership_benchmark(dataset, "tiny-random", methods, store=store, load_model=lambda spec: tiny_lm)
    with streamlit_server(tmp_path_factory.mktemp("browser_results_log"), LEAKLENS_STORE=str(store_path)) as url:
        yield url


def test_results_page_renders_heatmap_and_roc(results_app_url, browser_page, screenshot_dir):
    page = browser_page
    open_page(page, f"{results_app_url}/Results")
    page.wait_for_function("document.querySelectorAll('.js-plotly-plot .main-svg').length >= 3", timeout=60_000)
    assert exception_texts(page) == []
    body = page.locator('[data-testid="stMain"]').inner_text()
    assert "Methods × datasets" in body and "Stored runs" in body
    heatmap_text = page.locator(".js-plotly-plot").first.inner_text()
    assert "wikimia_length128.parquet" in heatmap_text and "booktection_sample.csv" in heatmap_text
    assert "Blind baseline" in heatmap_text
    assert page.locator(".js-plotly-plot .heatmaplayer").count() == 1
    roc_legends = page.locator(".js-plotly-plot .legendtext").all_text_contents()
    assert any(t.startswith("chance") for t in roc_legends)
    assert any(t.startswith("Blind baseline") for t in roc_legends)
    page.screenshot(path=str(screenshot_dir / "results_1440x900.png"))
    # Streamlit scrolls inside its own container, so a tall viewport is what captures the whole page.
    page.set_viewport_size({"width": 1440, "height": 2300})
    page.wait_for_timeout(1500)
    roc = page.locator(".js-plotly-plot").nth(2)
    assert roc.bounding_box()["y"] + roc.bounding_box()["height"] <= 2300
    page.screenshot(path=str(screenshot_dir / "results_full_1440.png"))


@pytest.fixture(scope="module")
def delta_results_url(tmp_path_factory, tiny_lm) -> Iterator[str]:
    """A server whose store holds one loss-delta comparison only."""
    store_path = tmp_path_factory.mktemp("browser_results_delta") / "results.sqlite"
    ref = ProblemSet("fresh set", builtin_problems(limit=20).problems[10:], True)
    run_leakage_test(builtin_problems(limit=10), ref, [ModelRequest("tiny-random")], load=lambda _: tiny_lm,
                     store=ResultStore(store_path))
    with streamlit_server(tmp_path_factory.mktemp("browser_results_delta_log"), LEAKLENS_STORE=str(store_path)) as url:
        yield url


def test_a_stored_loss_delta_comparison_opens_with_its_verdict(delta_results_url, browser_page, screenshot_dir):
    page = browser_page
    open_page(page, f"{delta_results_url}/Results")
    page.locator('[data-testid="stRadio"]').get_by_text("Loss delta", exact=True).click()
    wait_for_streamlit(page)
    page.wait_for_selector(".leaklens-finding", timeout=60_000)
    assert exception_texts(page) == []
    assert "LeakLens built-in reference vs fresh set" in page.locator('[data-testid="stMain"]').inner_text()
    banner = page.locator(".leaklens-finding").first.bounding_box()
    assert banner is not None and banner["y"] + banner["height"] <= 900  # the verdict on the first screen
    page.wait_for_function("document.querySelectorAll('.js-plotly-plot .main-svg').length >= 1", timeout=60_000)
    assert "Δ = " in page.locator(".js-plotly-plot").first.inner_text()
    page.screenshot(path=str(screenshot_dir / "results_loss_delta_1440x900.png"))


_REPORT_LAYOUT_JS = """() => {
  const inside = (box, outer) => box.left >= outer.left - 1 && box.right <= outer.right + 1
                               && box.top >= outer.top - 1 && box.bottom <= outer.bottom + 1;
  const plots = [...document.querySelectorAll('.js-plotly-plot')];
  return plots.map(plot => {
    const frame = plot.querySelector('.main-svg').getBoundingClientRect();
    const labels = [...plot.querySelectorAll('.xtick text, .ytick text, .legendtext, .g-gtitle text')];
    const bars = [...plot.querySelectorAll('.bars path')].map(e => getComputedStyle(e).fill);
    return {
      title: (plot.querySelector('.g-gtitle text') || {}).textContent || '',
      clipped: labels.filter(e => !inside(e.getBoundingClientRect(), frame)).map(e => e.textContent),
      lines: [...plot.querySelectorAll('.scatterlayer .trace .js-line')].map(e => getComputedStyle(e).stroke),
      bars: [...new Set(bars)],
      heatmap: plot.querySelectorAll('.heatmaplayer image').length,
    };
  });
}"""


def test_exported_report_reads_as_a_report(results_app_url, browser_page, screenshot_dir, tmp_path):
    """The Results page's HTML export, opened offline: the finding on top, labels inside, colours on every line."""
    page = browser_page
    open_page(page, f"{results_app_url}/Results")
    with page.expect_download(timeout=120_000) as download:
        page.get_by_role("button", name="Report (self-contained HTML)").click()
    report = tmp_path / "leaklens_report.html"
    download.value.save_as(report)
    text = report.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and text.count('class="leaklens-finding"') == 2

    page.context.set_offline(True)  # a report that needs the network would fail to draw here
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(report.as_uri(), wait_until="load")
    page.wait_for_function("document.querySelectorAll('.js-plotly-plot .main-svg').length >= 5", timeout=60_000)
    page.wait_for_timeout(800)
    assert [url for url in requested if not url.startswith(("file:", "data:", "blob:"))] == []

    # A first-time reader sees what was found before anything else: the verdict under the title, on screen.
    first = page.locator("body > *").nth(1)
    assert first.get_attribute("class") == "findings"
    banner = page.locator(".leaklens-finding").first
    assert banner.bounding_box()["y"] + banner.bounding_box()["height"] < 400
    assert banner.locator(".leaklens-headline").inner_text().strip()

    plots = page.evaluate(_REPORT_LAYOUT_JS)
    assert len(plots) == 1 + 2 * 2  # heatmap across runs, then bars and ROC per run
    assert plots[0]["heatmap"] == 1
    for plot in plots:
        assert plot["clipped"] == [], plot["title"]  # every tick label, legend entry and title inside the chart
    rocs = [p for p in plots if p["title"].startswith("ROC curves")]
    assert len(rocs) == 2
    for roc in rocs:
        curves = roc["lines"][:-1]  # the last line is the dotted chance diagonal, dark on purpose
        assert len(curves) == len(set(curves)) >= 3, curves
        assert not {"rgb(0, 0, 0)", "rgb(0, 0, 1)"} & set(curves)
    bars = [p for p in plots if "AUROC with 95% CI" in p["title"]]
    assert len(bars) == 2 and all(len(p["bars"]) >= 2 for p in bars)  # methods blue, baseline grey

    page.screenshot(path=str(screenshot_dir / "report_1440x900.png"))
    page.screenshot(path=str(screenshot_dir / "report_full_1440.png"), full_page=True)


def test_membership_page_runs_and_shows_charts(results_app_url, browser_page, screenshot_dir):
    """Runs after the Results test: a 12-text run on the tiny model from the page lands in the same store."""
    page = browser_page
    open_page(page, f"{results_app_url}/Membership_benchmark")
    assert exception_texts(page) == []
    page.get_by_text("Columns and sample").click()
    limit = page.get_by_label("Sample size (0 = all rows)")
    limit.fill("12")
    limit.press("Enter")
    wait_for_streamlit(page)
    assert "12 texts" in page.locator('[data-testid="stMain"]').inner_text()
    page.get_by_role("button", name="Run benchmark").click()
    page.wait_for_function("document.querySelectorAll('.js-plotly-plot .main-svg').length >= 3", timeout=120_000)
    wait_for_streamlit(page)
    assert exception_texts(page) == []
    body = page.locator('[data-testid="stMain"]').inner_text()
    assert "12 texts scored" in body and "Blind baseline AUROC" in body
    legends = page.locator(".js-plotly-plot .legendtext").all_text_contents()
    assert any(t.startswith("members (n=") for t in legends)  # the score distribution
    assert any(t.startswith("non-members (n=") for t in legends)
    assert any(t.startswith("chance") for t in legends)  # the ROC overlay
    full_page_screenshot(page, str(screenshot_dir / "membership_benchmark_1440.png"))


def test_mcq_report_from_the_store_opens_offline(tiny_lm, browser_page, screenshot_dir, tmp_path):
    """``python -m core report`` on a stored MCQ run, opened from file: verdict on top, the probe charts drawn."""
    from core.cli import main
    from core.data.questions import load_mcq
    from core.mcq.completion import MCQConfig
    from core.mcq.stored import run_stored_benchmark

    store = ResultStore(tmp_path / "results.sqlite")
    questions = load_mcq(str(DATA / "mmlu_sample.jsonl"), limit=4).questions
    _, run, _ = run_stored_benchmark(questions, MCQConfig(), load=lambda: tiny_lm, store=store, model="tiny-random",
                                     benchmark="mmlu_sample", shuffle_seed=1, permutation=True)
    report = tmp_path / "mcq_report.html"
    assert main(["report", run.run_id, "--out", str(report), "--store", str(store.path)]) == 0

    page = browser_page
    page.context.set_offline(True)
    page.goto(report.as_uri(), wait_until="load")
    page.wait_for_function("document.querySelectorAll('.js-plotly-plot .main-svg').length >= 3", timeout=60_000)
    page.wait_for_timeout(800)
    assert page.locator("body > *").nth(1).get_attribute("class") == "findings"
    banner = page.locator(".leaklens-finding").first
    assert banner.bounding_box()["y"] + banner.bounding_box()["height"] < 400
    assert "Multiple-choice" in page.locator("h2").first.inner_text()
    assert page.locator(".js-plotly-plot").count() == 3  # completion probe, next-token probe, order ranks
    page.screenshot(path=str(screenshot_dir / "mcq_report_1440x900.png"))
    page.screenshot(path=str(screenshot_dir / "mcq_report_full_1440.png"), full_page=True)
